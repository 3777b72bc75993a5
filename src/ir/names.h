// Names as users type them: how far one is from another, for "did you mean".
#pragma once

#include <cstddef>
#include <string_view>

namespace paraplan {

/// Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace paraplan
