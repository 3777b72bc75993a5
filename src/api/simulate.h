// The simulate job: replay one iteration of any plan file `plan -o` writes, read by the one plan
// file reader (api/plan_file.h) as the kind its planner and cost model name: a transformer plan
// under the analytic model, a mixed transformer plan under the mixed analytic model, a pipeline
// plan under Piper's cost model (with its model embedded) or DAPPLE's (its stage figures), an
// intra-operator plan (its layers' costs).
#pragma once

#include <cstddef>
#include <string>

#include "api/plan_file.h"
#include "io/json_fields.h"
#include "ir/plan.h"
#include "sim/simulator.h"

namespace paraplan::api {

struct SimulateRequest {
  std::string plan_path;
  std::string schedule;  ///< empty: the plan's own; transformer plans take gpipe, 1f1b, ...
  bool report = false;
  /// Transformer plans: replay on this stack (megatron, fsdp, deepspeed) with its own overlaps
  /// and kernels, the plan's knobs otherwise kept; empty: the plan's stack.
  std::string stack = {};
};

struct SimulateResult {
  PlanKind kind = PlanKind::kPipeline;      ///< the plan's planner and cost model
  std::string model;                        ///< the model's name
  Schedule schedule = Schedule::kOneFOneB;  ///< the schedule replayed
  sim::Result result;           ///< the timeline, per-device busy time and peak memory, the bubble
  double iteration_time_s = 0;  ///< simulated (Piper's plans: in the profile's time unit)
  /// The planner's own figure for the same plan: the analytic iteration time, Piper's bound
  /// N × objective, DAPPLE's latency, the intra-op plan's step time.
  double reference_s = 0;
  /// Pipeline plans: replayed on their cluster's links (the reference is then N × the
  /// placement's cost, seconds).
  bool on_network = false;
  double difference = 0;           ///< simulated / reference − 1
  int stages = 0;                  ///< pipeline stages (1 for intra-op plans)
  int microbatches = 0;            ///< per pipeline per iteration (0 for intra-op plans)
  std::size_t layers = 0;          ///< intra-op plans: layers replayed
  int devices = 0;                 ///< intra-op plans: devices every layer spans
  double analytic_peak_bytes = 0;  ///< transformer plans: the analytic model's peak memory
  /// Transformer plans: the device's memory (less any headroom) the replayed peaks must fit in,
  /// and whether every device's replayed peak does (another schedule can hold more in flight).
  double device_memory_bytes = 0;
  bool fits = true;
  std::string report_html;
};

/// Error(kInput) placed in the file for a plan it cannot read, Error(kInfeasible) for a plan
/// that does not fit, FieldError("schedule") for a schedule the plan cannot replay under.
SimulateResult simulate_plan(const SimulateRequest& request);
/// The same for a plan document already read (request.plan_path names it in messages).
SimulateResult simulate_document(const io::Json& doc, const SimulateRequest& request);
/// The same for a plan file already read.
SimulateResult simulate_file(const PlanFile& file, const SimulateRequest& request);

/// The schedule a pipeline plan file (Piper's cost model) runs under — the pass list the
/// simulator replays and `paraplan run` executes: per stage its replicas and, per replica, its
/// passes in order (["F" or "B", micro-batch]); then each replica's all-reduce and optimizer step;
/// and the rank layout (`ranks`: per rank in order its stage, replica, tensor-parallel index and
/// cluster device; ir/plan.h's rank_layout).
/// `schedule`: 1f1b (the plan's in-flight counts) or gpipe. The plan is read and checked as
/// simulate_plan does.
io::Json pipeline_schedule(const SimulateRequest& request);

}  // namespace paraplan::api
