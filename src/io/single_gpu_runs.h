// Training iterations measured on one GPU in plain PyTorch (data/h100-single-gpu: fp32 weights,
// bf16 autocast, SDPA, fused AdamW, gradient accumulation), with their peak memory and the
// micro-batches that ran out of memory: one JSON object per line, the model a Hugging Face
// config.json in the folder's configs/ (docs/formats.md, "Single-GPU runs").
#pragma once

#include <string>
#include <vector>

#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::io {

struct SingleGpuRun {
  std::string place;  ///< file and line, for messages
  std::string model_name;
  TransformerConfig model;
  std::string device;  ///< as CUDA names it ("NVIDIA H100 80GB HBM3")
  std::int64_t seq_len = 0, batch = 0, micro_batch = 0;
  Recompute recompute = Recompute::kNone;
  bool compiled = false;            ///< torch.compile on every block
  bool ran = false;                 ///< false: ran out of device memory
  double iteration_time_s = 0;      ///< median, when it ran
  double peak_allocated_bytes = 0;  ///< torch.cuda.max_memory_allocated (up to the failure)
  double peak_reserved_bytes = 0;   ///< torch.cuda.max_memory_reserved: what meets the wall
};

/// Reads `folder`/results.jsonl and the configs it names. Error(kInput) naming the file, line
/// and field for a malformed line or an unknown model; Error(kIo) for a missing file. Lines
/// that failed for another reason than memory (an `error` field) are not runs and are skipped.
std::vector<SingleGpuRun> read_single_gpu_runs(const std::string& folder);
/// The same from the lines' text; model configs are read from `folder`/configs.
std::vector<SingleGpuRun> parse_single_gpu_runs(const std::string& text, const std::string& path,
                                                const std::string& folder);

}  // namespace paraplan::io
