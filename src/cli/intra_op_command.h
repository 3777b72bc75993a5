// `paraplan plan --planner intra-op`: per-layer sharding (PaSE's strategy space and cost model)
// of an operator graph, from a built-in model or an ONNX file.
#pragma once

#include <string>

#include "ir/progress.h"

namespace paraplan::cli {

struct IntraOpArgs {
  std::string input;  ///< ONNX file (or empty with `model`)
  std::string format = "auto";
  std::string model;      ///< built-in operator graph
  int devices = 0;        ///< 0: 8 (PaSE's default)
  int batch = 0;          ///< 0: 128 (PaSE's default); ONNX: replaces a symbolic batch dim
  std::string flops;      ///< "10" (TFLOP/s) or with a unit
  std::string bandwidth;  ///< "16" (GB/s) or with a unit
  int min_block = 0;      ///< 0: the graph's own (PaSE's cutoff)
  bool keep_all_flows = false;
  bool powers_of_two = false;
  bool all_devices = false;
  bool json = false;
  std::string output;
  std::string dot;
  std::string report;  ///< HTML report: per-layer table, timeline, the operator graph
  std::string trace;   ///< Chrome trace of the simulated step
  ProgressSink* progress = nullptr;
};

int run_intra_op(const IntraOpArgs& args);

}  // namespace paraplan::cli
