#include "sim/pipeline_program.h"

#include <map>

#include <fmt/format.h>

#include "ir/error.h"

namespace paraplan::sim {
namespace {

enum Stream { kCompute = 0, kPipeline = 1, kDataParallel = 2 };

}  // namespace

Program pipeline_program(const Model& model, const Plan& plan, int n) {
  Program prog;
  prog.streams = {"compute", "pipeline", "data parallel"};
  prog.busy_streams = 2;  // compute and its blocking edge traffic
  const int stages = static_cast<int>(plan.stages.size());
  if (stages == 0 || n < 1) throw Error(ErrorKind::kInput, "simulation", "the plan has no stages or micro-batches");
  // Devices: replica r of stage s.
  std::vector<int> first_device(static_cast<std::size_t>(stages));
  std::vector<double> activation(static_cast<std::size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    const Stage& st = plan.stages[static_cast<std::size_t>(s)];
    if (st.data_parallel < 1 || n % st.data_parallel)
      throw Error(ErrorKind::kInput, "simulation",
                  fmt::format("stage {}: data-parallel degree {} must divide the {} micro-batches", s,
                              st.data_parallel, n));
    first_device[static_cast<std::size_t>(s)] = static_cast<int>(prog.devices.size());
    double fixed = 0, per_microbatch = 0;
    for (std::size_t k = 0; k < st.layers.size(); ++k) {
      const auto* opts = model.layers[static_cast<std::size_t>(st.layers[k])].options_for(st.tensor_parallel);
      const LayerOption& o = opts->at(static_cast<std::size_t>(st.option_index[k]));
      fixed += o.memory_fixed_bytes;
      per_microbatch += o.memory_per_inflight_bytes;
    }
    activation[static_cast<std::size_t>(s)] = per_microbatch;
    for (int r = 0; r < st.data_parallel; ++r) {
      prog.devices.push_back(st.data_parallel > 1 ? fmt::format("stage {} replica {} ({} layers)", s, r, st.layers.size())
                                                  : fmt::format("stage {} ({} layers)", s, st.layers.size()));
      prog.static_bytes.push_back(fixed);
    }
  }
  // Per replica: its micro-batches in 1F1B order with at most y in flight.
  struct Op {
    bool forward;
    int microbatch;
  };
  std::vector<std::vector<Op>> orders(prog.devices.size());
  for (int s = 0; s < stages; ++s) {
    const Stage& st = plan.stages[static_cast<std::size_t>(s)];
    for (int r = 0; r < st.data_parallel; ++r) {
      std::vector<int> mine;
      for (int j = r; j < n; j += st.data_parallel) mine.push_back(j);
      const int total = static_cast<int>(mine.size());
      const int warmup = std::min(std::max(st.inflight_microbatches - 1, 0), total);
      auto& ops = orders[static_cast<std::size_t>(first_device[static_cast<std::size_t>(s)] + r)];
      int f = 0, b = 0;
      for (; f < warmup; ++f) ops.push_back({true, mine[static_cast<std::size_t>(f)]});
      while (f < total) {
        ops.push_back({true, mine[static_cast<std::size_t>(f++)]});
        ops.push_back({false, mine[static_cast<std::size_t>(b++)]});
      }
      while (b < total) ops.push_back({false, mine[static_cast<std::size_t>(b++)]});
    }
  }
  std::map<std::tuple<int, int, bool>, int> finished;  // (stage, micro-batch, forward) → its traffic
  std::vector<int> last(prog.devices.size(), -1);
  std::vector<std::size_t> next(prog.devices.size(), 0);
  std::size_t placed = 0, total = 0;
  for (const auto& o : orders) total += o.size();
  while (placed < total) {
    bool progress = false;
    for (int s = 0; s < stages; ++s) {
      const Stage& st = plan.stages[static_cast<std::size_t>(s)];
      const double d = st.data_parallel;
      for (int r = 0; r < st.data_parallel; ++r) {
        const int dev = first_device[static_cast<std::size_t>(s)] + r;
        auto& cursor = next[static_cast<std::size_t>(dev)];
        while (cursor < orders[static_cast<std::size_t>(dev)].size()) {
          const Op op = orders[static_cast<std::size_t>(dev)][cursor];
          std::vector<int> after;
          if (op.forward && s > 0) {
            auto it = finished.find({s - 1, op.microbatch, true});
            if (it == finished.end()) break;
            after.push_back(it->second);
          }
          if (!op.forward) {
            if (s + 1 < stages) {
              auto it = finished.find({s + 1, op.microbatch, false});
              if (it == finished.end()) break;
              after.push_back(it->second);
            }
            auto f = finished.find({s, op.microbatch, true});
            if (f == finished.end()) break;
            after.push_back(f->second);
          }
          if (last[static_cast<std::size_t>(dev)] >= 0) after.push_back(last[static_cast<std::size_t>(dev)]);
          Task pass;
          pass.device = dev;
          pass.stream = kCompute;
          pass.after = after;
          pass.duration_s = st.compute_time * d * (op.forward ? 1.0 / 3 : 2.0 / 3);
          pass.name = fmt::format("{} mb {}", op.forward ? "F" : "B", op.microbatch);
          pass.phase = op.forward ? "forward" : "backward";
          pass.stage = s;
          pass.microbatch = op.microbatch;
          if (op.forward)
            pass.allocate_bytes = activation[static_cast<std::size_t>(s)];
          else
            pass.free_bytes = activation[static_cast<std::size_t>(s)];
          const int pass_id = prog.add(pass);
          // The stage's edge traffic (both directions, Piper's accounting): half after each pass.
          Task traffic;
          traffic.device = dev;
          traffic.stream = kPipeline;
          traffic.after = {pass_id};
          traffic.duration_s = st.communication_time * d / 2;
          traffic.name = fmt::format("{} traffic mb {}", op.forward ? "activation" : "gradient", op.microbatch);
          traffic.phase = "send";
          traffic.stage = s;
          traffic.microbatch = op.microbatch;
          const int traffic_id = prog.add(traffic);
          finished[{s, op.microbatch, op.forward}] = traffic_id;
          last[static_cast<std::size_t>(dev)] = traffic_id;
          ++cursor;
          ++placed;
          progress = true;
        }
      }
    }
    if (!progress) throw Error(ErrorKind::kInput, "simulation", "the schedule deadlocks (internal error)");
  }
  for (int s = 0; s < stages; ++s) {
    const Stage& st = plan.stages[static_cast<std::size_t>(s)];
    if (!(st.allreduce_time > 0)) continue;
    for (int r = 0; r < st.data_parallel; ++r) {
      const int dev = first_device[static_cast<std::size_t>(s)] + r;
      Task sync;
      sync.device = dev;
      sync.stream = kDataParallel;
      sync.after = {last[static_cast<std::size_t>(dev)]};
      sync.duration_s = st.allreduce_time * n;  // Piper charges it per micro-batch ÷ N
      sync.name = "all-reduce";
      sync.phase = "gradient sync";
      sync.stage = s;
      prog.add(sync);
    }
  }
  return prog;
}

PipelineSimulation simulate_pipeline_plan(const Model& model, const Plan& plan, int microbatches) {
  PipelineSimulation s;
  s.result = simulate(pipeline_program(model, plan, microbatches));
  s.makespan_s = s.result.makespan_s;
  s.bound_s = plan.objective * microbatches;
  s.difference = s.bound_s > 0 ? s.makespan_s / s.bound_s - 1 : 0;
  return s;
}

}  // namespace paraplan::sim
