// How much of an exhaustive sweep a test runs. In the Release build, all of it. Under
// AddressSanitizer (the checked build, where a search runs about ten times slower) a sweep that
// repeats one property over many shipped inputs runs a sample of them: the same code, the same
// checks on each case it runs; the counts that only the whole sweep can reach are checked in
// Release alone. Every case still runs under the sanitizers in some test or fuzz target; this only
// keeps CI's sanitized run from repeating the same searches for minutes.
#pragma once

#include <cstddef>

namespace paraplan::testing_support {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

/// Whether case `index` of a sweep runs: every case in Release, every `stride`-th under the
/// sanitizers (choose a stride coprime to an inner loop's length, so each of its values is met).
inline bool sweep_runs(std::size_t index, std::size_t stride) {
  return !kSanitized || index % stride == 0;
}

}  // namespace paraplan::testing_support
