// How a transformer is trained: batch, sequence and every parallelism knob. The analytic cost
// model prices one of these; the transformer planner searches over them.
#pragma once

#include <cstdint>
#include <string>

namespace paraplan {

enum class Recompute { kNone, kSelective, kFull };

struct TrainingConfig {
  std::int64_t seq_len = 2048;
  std::int64_t global_batch = 512;  ///< sequences per iteration
  std::int64_t micro_batch = 1;     ///< sequences per micro-batch
  int tp = 1;                       ///< tensor parallel
  int pp = 1;                       ///< pipeline stages
  int dp = 1;                       ///< data parallel
  Recompute recompute = Recompute::kFull;
  bool sequence_parallel = false;
  int zero_stage = 0;               ///< 0: none; 1: optimizer states; 2: + gradients; 3: + weights

  int devices() const { return tp * pp * dp; }
  /// Micro-batches per pipeline per iteration.
  std::int64_t microbatches() const { return global_batch / (micro_batch * dp); }
};

}  // namespace paraplan
