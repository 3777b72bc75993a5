// One training iteration of a transformer plan as a simulator program: one pipeline replica
// (the data-, tensor- and context-parallel replicas run the same program in lockstep), each
// stage a device with a compute stream, a collectives stream (tensor/context/expert parallel,
// blocking), a pipeline stream (sends to the neighbour stages) and a data-parallel stream
// (gradient synchronisation, overlapped with the last backward pass when configured). Event
// durations come from the analytic model's per-pass costs; the schedule orders the passes.
#pragma once

#include <string>

#include "cost/analytic.h"
#include "ir/plan.h"
#include "sim/simulator.h"

namespace paraplan::sim {

// The schedule is the plan's (ir/plan.h): a transformer pipeline replays under gpipe, 1f1b,
// interleaved-1f1b or zero-bubble.
using paraplan::parse_schedule;
using paraplan::Schedule;
using paraplan::schedule_name;

/// 1F1B, or interleaved 1F1B when vpp > 1.
Schedule default_schedule(const TrainingConfig& config);

struct TransformerSimulation {
  Result result;
  Schedule schedule = Schedule::kOneFOneB;
  double iteration_time_s = 0;  ///< makespan + the model's fixed iteration overhead
  double analytic_time_s = 0;   ///< the analytic model's figure for the same plan
  double difference = 0;        ///< simulated / analytic − 1
  double analytic_peak_bytes = 0;
};

/// The program of `config` (checked by cost.check) under `schedule` (interleaved needs vpp > 1;
/// GPipe and 1F1B need vpp = 1).
Program transformer_program(const AnalyticCostModel& cost, const TrainingConfig& config,
                            Schedule schedule);
TransformerSimulation simulate_transformer(const AnalyticCostModel& cost,
                                           const TrainingConfig& config, Schedule schedule);

}  // namespace paraplan::sim
