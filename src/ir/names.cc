#include "ir/names.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace paraplan {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string nearest_name(std::string_view typed, const std::vector<std::string>& names) {
  auto plain = [](std::string_view s) {
    std::string out;
    for (char c : s)
      if (c != '-' && c != '.' && c != '_')
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string t = plain(typed);
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, t.size() / 3) + 1;  // a swap costs 2
  for (const std::string& n : names)
    if (const std::size_t d = edit_distance(t, plain(n)); d < best_distance) {
      best = n;
      best_distance = d;
    }
  return best;
}

}  // namespace paraplan
