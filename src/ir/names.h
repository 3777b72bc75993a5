// Names as users type them: how far one is from another, for "did you mean".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace paraplan {

/// Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The one of `names` a user probably meant by `typed` (case, '-', '_' and '.' aside, within a
/// third of its letters; ties: the first listed), or "" when none is that close.
std::string nearest_name(std::string_view typed, const std::vector<std::string>& names);

}  // namespace paraplan
