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

enum PipelineStream { kStageCompute = 0, kStagePipeline = 1, kStageDataParallel = 2 };

// Builds the program of a staged plan: its devices (one per replica of each stage), their passes
// in the schedule's order with the traffic after each, then each replica's all-reduce and
// optimizer step.
class StagedBuilder {
 public:
  StagedBuilder(const std::vector<ReplayStage>& stages, int n, const Topology* topology)
      : stages_(stages), n_(n), topology_(topology), count_(static_cast<int>(stages.size())) {
    prog_.streams = {"compute", "pipeline", "data parallel"};
    // On a network, every stage names its replicas' devices.
    placed_ = topology != nullptr;
    for (const auto& st : stages)
      placed_ = placed_ && static_cast<int>(st.devices.size()) == st.replicas;
    if (topology != nullptr && !placed_)
      throw Error(ErrorKind::kInput, "simulation",
                  "replaying a plan on a network needs every stage's device ids (a placed plan)");
    if (placed_)
      for (int c = 0; c < topology->channel_count(); ++c)
        prog_.links.push_back({topology->channel_name(c), topology->channel_bandwidth(c)});
    // Blocking edge traffic is the device's own work; overlapped traffic runs beside it.
    prog_.busy_streams = 1;
    for (const auto& st : stages)
      if (st.traffic_blocks && st.traffic_s > 0) prog_.busy_streams = 2;
    if (count_ == 0 || n < 1)
      throw Error(ErrorKind::kInput, "simulation", "the plan has no stages or micro-batches");
  }

  Program build() {
    add_devices();
    add_passes();
    for (int s = 0; s < count_; ++s) add_tail(s);
    return std::move(prog_);
  }

 private:
  const ReplayStage& stage(int s) const { return stages_[static_cast<std::size_t>(s)]; }
  int first(int s) const { return first_device_[static_cast<std::size_t>(s)]; }

  // A transfer on the route between two devices (the first link, the rest as its route).
  int transfer(Task task, int from, int to, double bytes) {
    const std::vector<int> route = topology_->route(from, to);
    task.link = route.front();
    task.route.assign(route.begin() + 1, route.end());
    task.bytes = bytes;
    task.duration_s += topology_->route_latency_s(from, to);
    return prog_.add(std::move(task));
  }

  void add_devices() {
    for (int s = 0; s < count_; ++s) {
      const ReplayStage& st = stage(s);
      if (st.replicas < 1 || n_ % st.replicas)
        throw Error(ErrorKind::kInput, "simulation",
                    fmt::format("stage {}: {} replicas must divide the {} micro-batches", s,
                                st.replicas, n_));
      first_device_.push_back(static_cast<int>(prog_.devices.size()));
      for (int r = 0; r < st.replicas; ++r) {
        std::string name = st.replicas > 1 ? fmt::format("{} replica {}", st.name, r) : st.name;
        if (placed_) name += fmt::format(" (device {})", st.devices[static_cast<std::size_t>(r)]);
        prog_.devices.push_back(std::move(name));
        prog_.static_bytes.push_back(st.fixed_bytes);
        stage_of_.push_back(s);
        orders_.push_back(replica_passes(n_, st.replicas, r, st.inflight));
      }
    }
    last_.assign(prog_.devices.size(), -1);
  }

  // The pass `position` of device `dev`, once its inputs are placed (false until then).
  bool place(int dev, std::size_t position) {
    const int s = stage_of_[static_cast<std::size_t>(dev)];
    const ReplayStage& st = stage(s);
    const StagedPass op = orders_[static_cast<std::size_t>(dev)][position];
    std::vector<int> after;
    const auto needs = [&](int stage_index, bool forward) {
      auto it = finished_.find({stage_index, op.microbatch, forward});
      if (it == finished_.end()) return false;
      after.push_back(it->second);
      return true;
    };
    if (op.forward && s > 0 && !needs(s - 1, true)) return false;
    if (!op.forward && ((s + 1 < count_ && !needs(s + 1, false)) || !needs(s, true))) return false;
    if (last_[static_cast<std::size_t>(dev)] >= 0)
      after.push_back(last_[static_cast<std::size_t>(dev)]);
    Task pass;
    pass.device = dev;
    pass.stream = kStageCompute;
    pass.after = after;
    pass.duration_s = op.forward ? st.forward_s : st.backward_s;
    pass.name = fmt::format("{} mb {}", op.forward ? "F" : "B", op.microbatch);
    pass.phase = op.forward ? "forward" : "backward";
    pass.stage = s;
    pass.microbatch = op.microbatch;
    (op.forward ? pass.allocate_bytes : pass.free_bytes) = st.activation_bytes;
    const int pass_id = prog_.add(pass);
    const int traffic_id = add_traffic(dev, s, op, pass_id);
    finished_[{s, op.microbatch, op.forward}] = traffic_id;
    // Blocking traffic holds the next pass; overlapped traffic only its receiver.
    last_[static_cast<std::size_t>(dev)] = st.traffic_blocks ? traffic_id : pass_id;
    return true;
  }

  // What a pass sends: on a network one transfer per stage it sends to, one after the other;
  // else the stage's traffic time.
  int add_traffic(int dev, int s, StagedPass op, int pass_id) {
    const ReplayStage& st = stage(s);
    Task traffic;
    traffic.device = dev;
    traffic.stream = kStagePipeline;
    traffic.after = {pass_id};
    traffic.duration_s = placed_ ? 0 : st.traffic_s;
    traffic.name =
        fmt::format("{} traffic mb {}", op.forward ? "activation" : "gradient", op.microbatch);
    traffic.phase = "send";
    traffic.stage = s;
    traffic.microbatch = op.microbatch;
    int traffic_id = -1;
    if (placed_) {
      const int from = st.devices[static_cast<std::size_t>(dev - first(s))];
      for (const auto& [other, bytes] : op.forward ? st.sends : st.receives) {
        const ReplayStage& to = stage(other);
        traffic.after = {traffic_id < 0 ? pass_id : traffic_id};
        traffic_id =
            transfer(traffic, from,
                     to.devices[static_cast<std::size_t>(replica_of(op.microbatch, to.replicas))],
                     bytes / std::max(st.tensor_parallel, to.tensor_parallel));
      }
    }
    return traffic_id < 0 ? prog_.add(traffic) : traffic_id;
  }

  void add_passes() {
    std::vector<std::size_t> passes;
    for (const auto& o : orders_) passes.push_back(o.size());
    place_in_dependency_order(passes,
                              [&](int dev, std::size_t position) { return place(dev, position); });
  }

  // Once per replica after its last pass: the all-reduce, then the optimizer step. On a network
  // the all-reduce is each replica's ring send to the next, and every replica's optimizer step
  // waits for the whole ring.
  void add_tail(int s) {
    const ReplayStage& st = stage(s);
    std::vector<int> ring;
    if (placed_ && st.replicas > 1 && st.ring_bytes > 0)
      for (int r = 0; r < st.replicas; ++r) {
        const int dev = first(s) + r;
        Task send;
        send.device = dev;
        send.stream = kStageDataParallel;
        send.after = {last_[static_cast<std::size_t>(dev)]};
        send.name = "all-reduce";
        send.phase = "gradient sync";
        send.stage = s;
        const int from = st.devices[static_cast<std::size_t>(r)];
        const int to = st.devices[static_cast<std::size_t>((r + 1) % st.replicas)];
        // 2(d − 1) ring steps, each paying the route's latency.
        send.duration_s = (2 * (st.replicas - 1) - 1) * topology_->route_latency_s(from, to);
        ring.push_back(transfer(send, from, to, st.ring_bytes));
      }
    for (int r = 0; r < st.replicas; ++r) {
      const int dev = first(s) + r;
      int tail = last_[static_cast<std::size_t>(dev)];
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
        tail = prog_.add(task);
      };
      if (!placed_) then(kStageDataParallel, st.allreduce_s, "all-reduce", "gradient sync", {tail});
      std::vector<int> after = ring;
      after.push_back(tail);
      then(kStageCompute, st.optimizer_s, "optimizer", "optimizer", after);
    }
  }

  const std::vector<ReplayStage>& stages_;
  const int n_;
  const Topology* topology_;
  const int count_;
  bool placed_ = false;
  Program prog_;
  std::vector<int> first_device_, stage_of_, last_;
  std::vector<std::vector<StagedPass>> orders_;         // per device
  std::map<std::tuple<int, int, bool>, int> finished_;  // (stage, micro-batch, forward) → traffic
};

}  // namespace

Program staged_program(const std::vector<ReplayStage>& stages, int n, const Topology* topology) {
  return StagedBuilder(stages, n, topology).build();
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

Program mixed_program(const Plan& plan, const std::vector<std::string>& stage_names) {
  const int m = plan.microbatches;
  if (m < 1) throw Error(ErrorKind::kInput, "simulation", "the plan has no micro-batches");
  const MixedTrainingPlan& detail = plan.as<MixedTrainingPlan>();
  std::vector<ReplayStage> stages;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const Stage& st = plan.stages[s];
    ReplayStage r;
    r.name = s < stage_names.size() ? stage_names[s] : fmt::format("stage {}", s);
    r.replicas = 1;  // the stage's replicas split every micro-batch, in lockstep
    r.inflight = st.inflight_microbatches;
    r.forward_s = st.time / 3;
    r.backward_s = st.time * 2 / 3;
    r.allreduce_s = st.allreduce_time;
    r.optimizer_s = st.optimizer_time;
    if (s < detail.stage_memory.size()) {  // activations per micro-batch in flight, the rest held
      const MemoryBreakdown& mem = detail.stage_memory[s];
      r.activation_bytes = mem.activations_bytes / std::max(1, st.inflight_microbatches);
      r.fixed_bytes = mem.peak_bytes - mem.activations_bytes;
    }
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
  s.bound_s = (topology != nullptr && plan.as<PipelineDetail>().placement
                   ? plan.as<PipelineDetail>().placement->cost_s
                   : plan.objective) *
              microbatches;
  s.difference = s.bound_s > 0 ? s.makespan_s / s.bound_s - 1 : 0;
  return s;
}

}  // namespace paraplan::sim
