// Progress of a long search, as planners report it to whoever listens (the CLI draws it on a
// terminal). Planners neither print nor decide when progress is worth showing; they call
// `report` at coarse steps, possibly from several threads at once.
#pragma once

#include <cmath>
#include <string>

namespace paraplan {

struct Progress {
  std::string task;            ///< what is being searched, e.g. "pipeline stages of gnmt"
  double done = 0, total = 0;  ///< how far, in `unit`
  std::string unit;            ///< e.g. "layer sets", "shapes"
  double best = NAN;           ///< the best objective found so far (NaN: none yet)
  std::string best_unit;       ///< e.g. "s per iteration"
};

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// Thread-safe in every implementation; cheap enough to call a few thousand times a second.
  virtual void report(const Progress& progress) = 0;
};

}  // namespace paraplan
