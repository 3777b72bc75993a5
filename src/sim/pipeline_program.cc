#include "sim/pipeline_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cost/placement.h"
#include "ir/error.h"
#include "sim/pass_order.h"

namespace paraplan::sim {
namespace {

enum Stream { kCompute = 0, kPipeline = 1, kDataParallel = 2 };

}  // namespace

Program staged_program(const std::vector<ReplayStage>& stages, int n, const Topology* topology) {
  Program prog;
  prog.streams = {"compute", "pipeline", "data parallel"};
  const int count = static_cast<int>(stages.size());
  // On a network, every stage names its replicas' devices.
  bool placed = topology != nullptr;
  for (const auto& st : stages)
    placed = placed && static_cast<int>(st.devices.size()) == st.replicas;
  if (topology != nullptr && !placed)
    throw Error(ErrorKind::kInput, "simulation",
                "replaying a plan on a network needs every stage's device ids (a placed plan)");
  if (placed)
    for (int c = 0; c < topology->channel_count(); ++c)
      prog.links.push_back({topology->channel_name(c), topology->channel_bandwidth(c)});
  // A transfer on the route between two devices (the first link, the rest as its route).
  const auto transfer = [&](Task task, int from, int to, double bytes) {
    const std::vector<int> route = topology->route(from, to);
    task.link = route.front();
    task.route.assign(route.begin() + 1, route.end());
    task.bytes = bytes;
    task.duration_s += topology->route_latency_s(from, to);
    return prog.add(std::move(task));
  };
  // Blocking edge traffic is the device's own work; overlapped traffic runs beside it.
  prog.busy_streams = 1;
  for (const auto& st : stages)
    if (st.traffic_blocks && st.traffic_s > 0) prog.busy_streams = 2;
  if (count == 0 || n < 1)
    throw Error(ErrorKind::kInput, "simulation", "the plan has no stages or micro-batches");
  std::vector<int> first_device(static_cast<std::size_t>(count));
  for (int s = 0; s < count; ++s) {
    const ReplayStage& st = stages[static_cast<std::size_t>(s)];
    if (st.replicas < 1 || n % st.replicas)
      throw Error(
          ErrorKind::kInput, "simulation",
          fmt::format("stage {}: {} replicas must divide the {} micro-batches", s, st.replicas, n));
    first_device[static_cast<std::size_t>(s)] = static_cast<int>(prog.devices.size());
    for (int r = 0; r < st.replicas; ++r) {
      std::string name = st.replicas > 1 ? fmt::format("{} replica {}", st.name, r) : st.name;
      if (placed) name += fmt::format(" (device {})", st.devices[static_cast<std::size_t>(r)]);
      prog.devices.push_back(std::move(name));
      prog.static_bytes.push_back(st.fixed_bytes);
    }
  }
  // Per replica: its micro-batches in 1F1B order with at most `inflight` in flight.
  struct Op {
    bool forward;
    int microbatch;
  };
  std::vector<std::vector<Op>> orders(prog.devices.size());
  for (int s = 0; s < count; ++s) {
    const ReplayStage& st = stages[static_cast<std::size_t>(s)];
    for (int r = 0; r < st.replicas; ++r) {
      std::vector<int> mine;
      for (int j = r; j < n; j += st.replicas) mine.push_back(j);
      auto& ops = orders[static_cast<std::size_t>(first_device[static_cast<std::size_t>(s)] + r)];
      for (const PassSlot& slot :
           one_f_one_b(static_cast<int>(mine.size()), std::max(st.inflight - 1, 0)))
        ops.push_back({slot.forward, mine[static_cast<std::size_t>(slot.index)]});
    }
  }
  std::map<std::tuple<int, int, bool>, int>
      finished;  // (stage, micro-batch, forward) → its traffic
  std::vector<int> last(prog.devices.size(), -1);
  // Each device is one replica of one stage: its stage by device number.
  std::vector<int> stage_of(prog.devices.size());
  for (int s = 0; s < count; ++s)
    for (int r = 0; r < stages[static_cast<std::size_t>(s)].replicas; ++r)
      stage_of[static_cast<std::size_t>(first_device[static_cast<std::size_t>(s)] + r)] = s;
  std::vector<std::size_t> passes;
  for (const auto& o : orders) passes.push_back(o.size());
  place_in_dependency_order(passes, [&](int dev, std::size_t position) {
    const int s = stage_of[static_cast<std::size_t>(dev)];
    const ReplayStage& st = stages[static_cast<std::size_t>(s)];
    const Op op = orders[static_cast<std::size_t>(dev)][position];
    std::vector<int> after;
    if (op.forward && s > 0) {
      auto it = finished.find({s - 1, op.microbatch, true});
      if (it == finished.end()) return false;
      after.push_back(it->second);
    }
    if (!op.forward) {
      if (s + 1 < count) {
        auto it = finished.find({s + 1, op.microbatch, false});
        if (it == finished.end()) return false;
        after.push_back(it->second);
      }
      auto f = finished.find({s, op.microbatch, true});
      if (f == finished.end()) return false;
      after.push_back(f->second);
    }
    if (last[static_cast<std::size_t>(dev)] >= 0)
      after.push_back(last[static_cast<std::size_t>(dev)]);
    Task pass;
    pass.device = dev;
    pass.stream = kCompute;
    pass.after = after;
    pass.duration_s = op.forward ? st.forward_s : st.backward_s;
    pass.name = fmt::format("{} mb {}", op.forward ? "F" : "B", op.microbatch);
    pass.phase = op.forward ? "forward" : "backward";
    pass.stage = s;
    pass.microbatch = op.microbatch;
    if (op.forward)
      pass.allocate_bytes = st.activation_bytes;
    else
      pass.free_bytes = st.activation_bytes;
    const int pass_id = prog.add(pass);
    Task traffic;
    traffic.device = dev;
    traffic.stream = kPipeline;
    traffic.after = {pass_id};
    traffic.duration_s = placed ? 0 : st.traffic_s;
    traffic.name =
        fmt::format("{} traffic mb {}", op.forward ? "activation" : "gradient", op.microbatch);
    traffic.phase = "send";
    traffic.stage = s;
    traffic.microbatch = op.microbatch;
    int traffic_id = -1;
    if (placed) {  // one transfer per stage it sends to, one after the other
      const int from = st.devices[static_cast<std::size_t>(dev - first_device[s])];
      for (const auto& [other, bytes] : op.forward ? st.sends : st.receives) {
        const ReplayStage& to = stages[static_cast<std::size_t>(other)];
        traffic.after = {traffic_id < 0 ? pass_id : traffic_id};
        traffic_id = transfer(traffic, from,
                              to.devices[static_cast<std::size_t>(op.microbatch % to.replicas)],
                              bytes / std::max(st.tensor_parallel, to.tensor_parallel));
      }
    }
    if (traffic_id < 0) traffic_id = prog.add(traffic);
    finished[{s, op.microbatch, op.forward}] = traffic_id;
    // Blocking traffic holds the next pass; overlapped traffic only its receiver.
    last[static_cast<std::size_t>(dev)] = st.traffic_blocks ? traffic_id : pass_id;
    return true;
  });
  // Once per replica after its last pass: the all-reduce, then the optimizer step. On a
  // network the all-reduce is each replica's ring send to the next, and every replica's
  // optimizer step waits for the whole ring.
  for (int s = 0; s < count; ++s) {
    const ReplayStage& st = stages[static_cast<std::size_t>(s)];
    std::vector<int> ring;
    if (placed && st.replicas > 1 && st.ring_bytes > 0)
      for (int r = 0; r < st.replicas; ++r) {
        const int dev = first_device[static_cast<std::size_t>(s)] + r;
        Task send;
        send.device = dev;
        send.stream = kDataParallel;
        send.after = {last[static_cast<std::size_t>(dev)]};
        send.name = "all-reduce";
        send.phase = "gradient sync";
        send.stage = s;
        const int from = st.devices[static_cast<std::size_t>(r)];
        const int to = st.devices[static_cast<std::size_t>((r + 1) % st.replicas)];
        // 2(d − 1) ring steps, each paying the route's latency.
        send.duration_s = (2 * (st.replicas - 1) - 1) * topology->route_latency_s(from, to);
        ring.push_back(transfer(send, from, to, st.ring_bytes));
      }
    for (int r = 0; r < st.replicas; ++r) {
      const int dev = first_device[static_cast<std::size_t>(s)] + r;
      int tail = last[static_cast<std::size_t>(dev)];
      const auto then = [&](int stream, double duration_s, const char* name, const char* phase,
                            std::vector<int> after) {
        if (!(duration_s > 0)) return;
        Task task;
        task.device = dev;
        task.stream = stream;
        task.after = std::move(after);
        task.duration_s = duration_s;
        task.name = name;
        task.phase = phase;
        task.stage = s;
        tail = prog.add(task);
      };
      if (!placed) then(kDataParallel, st.allreduce_s, "all-reduce", "gradient sync", {tail});
      std::vector<int> after = ring;
      after.push_back(tail);
      then(kCompute, st.optimizer_s, "optimizer", "optimizer", after);
    }
  }
  return prog;
}

Program pipeline_program(const Model& model, const Plan& plan, int n, const Topology* topology) {
  std::vector<ReplayStage> stages;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const Stage& st = plan.stages[s];
    ReplayStage r;
    r.name = fmt::format("stage {} ({} layers)", s, st.layers.size());
    r.replicas = st.data_parallel;
    r.inflight = st.inflight_microbatches;
    const double d = st.data_parallel;
    // Forward's share of the stage's compute: measured where every layer's option says (a
    // profile), else a third.
    double forward = 0, compute = 0;
    bool measured = true;
    for (std::size_t k = 0; k < st.layers.size(); ++k) {
      const auto* opts =
          model.layers.at(static_cast<std::size_t>(st.layers[k])).options_for(st.tensor_parallel);
      const LayerOption& o = opts->at(static_cast<std::size_t>(st.option_index[k]));
      r.fixed_bytes += o.memory_fixed_bytes;
      r.activation_bytes += o.memory_per_inflight_bytes;
      measured = measured && o.forward_time_s > 0;
      forward += o.forward_time_s;
      compute += o.compute_time_s;
    }
    const double share = measured && compute > 0 ? forward / compute : 1.0 / 3;
    r.forward_s = st.compute_time * d * share;
    r.backward_s = st.compute_time * d * (1 - share);
    r.traffic_s = st.communication_time * d / 2;  // Piper's edge traffic, half after each pass
    r.traffic_blocks = true;
    r.allreduce_s = st.allreduce_time * n;  // Piper charges it per micro-batch ÷ N
    r.optimizer_s = st.optimizer_time * n;  // likewise
    if (topology != nullptr) {
      if (static_cast<int>(st.device_ids.size()) != st.devices())
        throw Error(ErrorKind::kInput, "simulation",
                    fmt::format("stage {} names {} device ids; a placed stage names d × t = {}", s,
                                st.device_ids.size(), st.devices()));
      for (int k = 0; k < st.data_parallel; ++k)
        r.devices.push_back(st.device_ids[static_cast<std::size_t>(k * st.tensor_parallel)]);
      for (int id : st.device_ids)
        if (id < 0 || id >= topology->device_count())
          throw Error(ErrorKind::kInput, "simulation",
                      fmt::format("stage {} names device {}; the cluster has {}", s, id,
                                  topology->device_count()));
      r.tensor_parallel = st.tensor_parallel;
      const double weights = stage_gradient_bytes(model, st);
      r.ring_bytes = 2.0 * (d - 1) / d * weights;
    }
    stages.push_back(r);
  }
  if (topology != nullptr) {  // cut edges: sends forward, gradients back
    for (const auto& [pair, bytes] : stage_cut_bytes(model, plan)) {
      stages[static_cast<std::size_t>(pair.first)].sends.push_back({pair.second, bytes});
      stages[static_cast<std::size_t>(pair.second)].receives.push_back({pair.first, bytes});
    }
    std::set<int> seen;
    for (const auto& st : plan.stages)
      for (int id : st.device_ids)
        if (!seen.insert(id).second)
          throw Error(ErrorKind::kInput, "simulation",
                      fmt::format("device {} runs two stage replicas", id));
  }
  return staged_program(stages, n, topology);
}

Program dapple_program(const Plan& plan) {
  const int m = plan.microbatches;
  if (m < 1) throw Error(ErrorKind::kInput, "simulation", "the plan has no micro-batches");
  std::vector<ReplayStage> stages;
  const int count = static_cast<int>(plan.stages.size());
  for (int s = 0; s < count; ++s) {
    const Stage& st = plan.stages[static_cast<std::size_t>(s)];
    ReplayStage r;
    r.name = fmt::format("stage {} ({} GPUs)", s, st.data_parallel);
    r.replicas = 1;  // DAPPLE splits every micro-batch across the stage's GPUs, in lockstep
    r.inflight = count - s;
    r.forward_s = st.compute_time / m / 3;
    r.backward_s = st.compute_time / m * 2 / 3;
    r.traffic_s = st.communication_time / m / 2;  // DAPPLE's hop counts both directions
    r.traffic_blocks = false;
    stages.push_back(r);
  }
  return staged_program(stages, m);
}

PipelineSimulation simulate_pipeline_plan(const Model& model, const Plan& plan, int microbatches,
                                          const Topology* topology) {
  PipelineSimulation s;
  s.result = simulate(pipeline_program(model, plan, microbatches, topology));
  s.makespan_s = s.result.makespan_s;
  // On a network the reference is the placement's own bottleneck (its links are full duplex,
  // Piper's flat term counts both directions on one bandwidth).
  s.bound_s = (topology != nullptr && plan.placement ? plan.placement->cost_s : plan.objective) *
              microbatches;
  s.difference = s.bound_s > 0 ? s.makespan_s / s.bound_s - 1 : 0;
  return s;
}

}  // namespace paraplan::sim
