// Megatron-LM's orders: 1F1B runs min(p − i − 1, m) forwards, then alternates, then drains;
// interleaved 1F1B (v chunks per device) numbers micro-batch chunks k = 0 .. m·v − 1 with chunk
// (k ÷ p) mod v (backward: v − 1 − that) and micro-batch (k ÷ (p·v))·p + k mod p, and warms up
// with 2(p − i − 1) + (v − 1)·p forwards; GPipe runs every forward, then every backward.
#include "sim/transformer_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/error.h"
#include "sim/pass_order.h"

namespace paraplan::sim {
namespace {

enum Stream { kCompute = 0, kCollectives = 1, kPipeline = 2, kDataParallel = 3 };

struct Op {
  bool forward;
  int chunk;
  int microbatch;
  bool weight = false;  ///< zero-bubble: the deferred weight-gradient half of a backward
};

std::vector<Op> device_order(Schedule schedule, int p, int v, int m, int device) {
  std::vector<Op> ops;
  if (schedule == Schedule::kGpipe) {
    for (int j = 0; j < m; ++j) ops.push_back({true, 0, j});
    for (int j = m - 1; j >= 0; --j) ops.push_back({false, 0, j});
    return ops;
  }
  if (schedule == Schedule::kZeroBubble) {
    // 1F1B with the weight gradients of the last `device` backwards held back; in the drain a
    // deferred one runs before each backward, filling the wait for its input.
    std::vector<int> deferred;
    std::size_t oldest = 0;
    const int warmup = std::min(p - device - 1, m);
    int f = 0, b = 0;
    for (; f < warmup; ++f) ops.push_back({true, 0, f});
    while (f < m) {
      ops.push_back({true, 0, f++});
      ops.push_back({false, 0, b});
      deferred.push_back(b++);
      if (static_cast<int>(deferred.size() - oldest) > device)
        ops.push_back({false, 0, deferred[oldest++], true});
    }
    while (b < m) {
      if (oldest < deferred.size()) ops.push_back({false, 0, deferred[oldest++], true});
      ops.push_back({false, 0, b});
      deferred.push_back(b++);
    }
    while (oldest < deferred.size()) ops.push_back({false, 0, deferred[oldest++], true});
    return ops;
  }
  const int total = m * v;
  auto forward_op = [&](int k) { return Op{true, (k / p) % v, (k / (p * v)) * p + k % p}; };
  auto backward_op = [&](int k) {
    return Op{false, v - 1 - (k / p) % v, (k / (p * v)) * p + k % p};
  };
  const int warmup =
      schedule == Schedule::kInterleaved ? 2 * (p - device - 1) + (v - 1) * p : p - device - 1;
  for (const PassSlot& slot : one_f_one_b(total, warmup))
    ops.push_back(slot.forward ? forward_op(slot.index) : backward_op(slot.index));
  return ops;
}

}  // namespace

Schedule default_schedule(const TrainingConfig& t) {
  return t.vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
}

namespace {

// One pipeline replica's program as it is built: its devices and links, every pass placed in
// dependency order, then each stage's gradient synchronisation and optimizer step.
struct ProgramBuilder {
  ProgramBuilder(const AnalyticCostModel& cost_model, const TrainingConfig& config,
                 Schedule pass_schedule);
  void add_devices();
  int dp_transfer(int device, double seconds, const std::string& name, std::vector<int> after,
                  int stage, int microbatch);
  /// Layers of (device, chunk), and how many of a chunk's layers are recomputed.
  int chunk_layers(int device, int chunk) const;
  int recomputed(int n) const;
  /// Zero bubble: the deferred weight-gradient half of a backward; false until its input half.
  bool place_weight_half(int i, const Op& op);
  /// A forward or backward pass with its collectives and its send; false until its inputs.
  bool place_pass(int i, const Op& op);
  void add_sync_and_step(int i);

  const AnalyticCostModel& cost;
  const TrainingConfig& t;
  const Schedule schedule;
  const BlockCosts c;
  const int p, v;
  std::vector<int> split;   // layers per rank
  std::vector<int> chunks;  // layers per virtual stage (chunk · pp + rank)
  bool p2p_on_nic = false, dp_on_nic = false;
  double nic_bw = 0;
  Program prog;
  std::vector<int> p2p_link, dp_link;
  std::vector<SyncParts> parts;  ///< ZeRO 2/3: each device's per-pass collectives
  std::vector<std::vector<int>> reduce_scatters;
  // Task ids of each (virtual stage, micro-batch) pass and of its outgoing send.
  std::map<std::tuple<int, int, bool>, int> done_pass, sent;
  std::vector<int> last_blocking;  ///< per device: compute waits for it
  std::vector<int> last_backward;
  /// What the last backward pass waited for: an overlapped reduction starts with that pass.
  std::vector<std::vector<int>> last_backward_inputs;
};

ProgramBuilder::ProgramBuilder(const AnalyticCostModel& cost_model, const TrainingConfig& config,
                               Schedule pass_schedule)
    : cost(cost_model),
      t(config),
      schedule(pass_schedule),
      c(cost_model.block_costs(config)),
      p(config.pp),
      v(config.vpp),
      reduce_scatters(static_cast<std::size_t>(config.pp)),
      last_blocking(static_cast<std::size_t>(config.pp), -1),
      last_backward(static_cast<std::size_t>(config.pp), -1),
      last_backward_inputs(static_cast<std::size_t>(config.pp)) {
  const int layers = static_cast<int>(cost.model().num_layers);
  split = t.stage_layers.empty() ? even_stage_split(layers, p) : t.stage_layers;
  chunks = virtual_split(t, layers);
  const int node = cost.cluster().machine_sizes.empty() ? 1 : cost.cluster().machine_sizes[0];
  p2p_on_nic = t.tp * t.cp * t.pp > node && cost.cluster().tiers.size() > 1;
  dp_on_nic = static_cast<std::int64_t>(t.devices()) > node && cost.cluster().tiers.size() > 1;
  nic_bw = c.p2p_bandwidth_bytes_per_s > 0 ? c.p2p_bandwidth_bytes_per_s : 1e12;
}

void ProgramBuilder::add_devices() {
  prog.streams = {"compute", "collectives", "pipeline", "data parallel"};
  prog.busy_streams = 2;  // compute and its blocking collectives
  // Links: per device, its pipeline sends, and its gradient synchronisation (the same NIC when
  // both leave the node, so they share its bandwidth).
  p2p_link.resize(static_cast<std::size_t>(p));
  dp_link.resize(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    prog.devices.push_back(
        fmt::format("stage {} ({} layers)", i, split[static_cast<std::size_t>(i)]));
    p2p_link[static_cast<std::size_t>(i)] = static_cast<int>(prog.links.size());
    prog.links.push_back({fmt::format("stage {} {}", i, p2p_on_nic ? "NIC" : "NVLink"), nic_bw});
    if (p2p_on_nic && dp_on_nic) {
      dp_link[static_cast<std::size_t>(i)] = p2p_link[static_cast<std::size_t>(i)];
    } else {
      dp_link[static_cast<std::size_t>(i)] = static_cast<int>(prog.links.size());
      prog.links.push_back({fmt::format("stage {} data parallel", i), nic_bw});
    }
    const MemoryBreakdown fixed =
        cost.stage_memory(t, c, split[static_cast<std::size_t>(i)], i == 0, i == p - 1, 0.0);
    // ZeRO 3's gathered weights are held through every pass (fragmented like the transients).
    prog.static_bytes.push_back(fixed.weights_bytes + fixed.gradients_bytes +
                                fixed.optimizer_bytes + fixed.reserved_bytes +
                                (1 + cost.calibration().allocator_fragmentation) *
                                    cost.zero3_gathered_bytes(t, c, i == 0, i == p - 1));
  }

  // ZeRO 2/3: per-pass collectives of each device's parameters (a chunk's share with vpp).
  parts.resize(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    const auto [dense, expert] = cost.stage_parameters(c, t, i, split[static_cast<std::size_t>(i)]);
    parts[static_cast<std::size_t>(i)] = cost.sync_parts(t, dense, expert);
  }
}

int ProgramBuilder::dp_transfer(int device, double seconds, const std::string& name,
                                std::vector<int> after, int stage, int microbatch) {
  Task x;
  x.device = device;
  x.stream = kDataParallel;
  x.link = dp_link[static_cast<std::size_t>(device)];
  x.bytes = seconds * nic_bw;  // its time at the link's full bandwidth
  x.after = std::move(after);
  x.name = name;
  x.phase = "gradient sync";
  x.stage = stage;
  x.microbatch = microbatch;
  return prog.add(x);
}

int ProgramBuilder::chunk_layers(int device, int chunk) const {
  return chunks[static_cast<std::size_t>(chunk * p + device)];
}

int ProgramBuilder::recomputed(int n) const {
  if (t.recompute != Recompute::kFull) return 0;
  return t.recompute_layers > 0 ? std::min(n, t.recompute_layers) : n;
}

bool ProgramBuilder::place_weight_half(int i, const Op& op) {
  const int vs = op.chunk * p + i;  // virtual stage
  const int vstages = p * v;
  // The weight-gradient half: after its backward's input half, on the compute stream.
  auto b = done_pass.find({vs, op.microbatch, false});
  if (b == done_pass.end()) return false;
  const int n = chunk_layers(i, op.chunk);
  const int rc = recomputed(n);
  Task w;
  w.device = i;
  w.stream = kCompute;
  w.after = {b->second};
  if (last_blocking[static_cast<std::size_t>(i)] >= 0)
    w.after.push_back(last_blocking[static_cast<std::size_t>(i)]);
  w.duration_s = (rc * c.layer_backward_s + (n - rc) * c.layer_plain_backward_s) / 2 +
                 (vs == 0 ? c.embedding_s / 3 : 0.0) + (vs == vstages - 1 ? c.head_s / 3 : 0.0);
  w.free_bytes = rc * c.layer_activation_bytes + (n - rc) * c.layer_plain_activation_bytes +
                 (vs == vstages - 1 ? c.logits_bytes : 0.0);
  w.name = fmt::format("W mb {}", op.microbatch);
  w.phase = "backward";
  w.stage = vs;
  w.microbatch = op.microbatch;
  const int w_id = prog.add(w);
  last_blocking[static_cast<std::size_t>(i)] = w_id;
  last_backward[static_cast<std::size_t>(i)] = w_id;
  last_backward_inputs[static_cast<std::size_t>(i)] =
      prog.tasks[static_cast<std::size_t>(w_id)].after;
  return true;
}

bool ProgramBuilder::place_pass(int i, const Op& op) {
  const int vs = op.chunk * p + i;  // virtual stage
  const int vstages = p * v;
  const bool split_backward = schedule == Schedule::kZeroBubble;
  // Inputs: the activation from the previous virtual stage, or the gradient from the next.
  std::vector<int> after;
  if (op.forward && vs > 0) {
    auto it = sent.find({vs - 1, op.microbatch, true});
    if (it == sent.end()) return false;
    after.push_back(it->second);
  }
  if (!op.forward) {
    if (vs < vstages - 1) {
      auto it = sent.find({vs + 1, op.microbatch, false});
      if (it == sent.end()) return false;
      after.push_back(it->second);
    }
    auto f = done_pass.find({vs, op.microbatch, true});
    if (f == done_pass.end()) return false;
    after.push_back(f->second);
  }
  if (last_blocking[static_cast<std::size_t>(i)] >= 0)
    after.push_back(last_blocking[static_cast<std::size_t>(i)]);
  if (t.zero_stage >= 3 && op.forward && parts[static_cast<std::size_t>(i)].weight_gather_s > 0) {
    // ZeRO 3: the per-layer gathers and reduce-scatters of the micro-batch, as far as the
    // prefetch leaves them exposed (the analytic model's figure), before its forward.
    const int n = split[static_cast<std::size_t>(i)];
    const double work = cost.stage_work_s(t, c, i == 0, i == p - 1, n);
    const int gather =
        dp_transfer(i, cost.zero3_microbatch_s(t, c, n, work) / v,
                    fmt::format("ZeRO-3 gathers and reduce-scatters mb {}", op.microbatch),
                    last_blocking[static_cast<std::size_t>(i)] >= 0
                        ? std::vector<int>{last_blocking[static_cast<std::size_t>(i)]}
                        : std::vector<int>{},
                    vs, op.microbatch);
    after.push_back(gather);
  }
  const int n = chunk_layers(i, op.chunk);
  const int rc = recomputed(n);
  const bool first = vs == 0, last = vs == vstages - 1;
  const std::string label =
      fmt::format("{}{} mb {}", op.forward ? "F" : "B",
                  v > 1 ? fmt::format(" chunk {}", op.chunk) : "", op.microbatch);
  Task compute;
  compute.device = i;
  compute.stream = kCompute;
  compute.after = after;
  compute.name = label;
  compute.phase = op.forward ? "forward" : "backward";
  compute.stage = vs;
  compute.microbatch = op.microbatch;
  Task comm = compute;
  comm.stream = kCollectives;
  comm.name = label + (t.tp_comm_overlap ? " collectives (exposed part of the overlapped)"
                                         : " collectives");
  comm.phase = "collectives";
  comm.after.clear();
  const double activations =
      rc * c.layer_activation_bytes + (n - rc) * c.layer_plain_activation_bytes;
  if (op.forward) {
    compute.duration_s =
        n * c.layer_forward_s + (first ? c.embedding_s / 3 : 0.0) + (last ? c.head_s / 3 : 0.0);
    comm.duration_s = n * c.layer_forward_comm_s;
    compute.allocate_bytes = activations + (last ? c.logits_bytes : 0.0);
  } else {
    compute.duration_s = rc * c.layer_backward_s + (n - rc) * c.layer_plain_backward_s +
                         (first ? c.embedding_s * 2 / 3 : 0.0) + (last ? c.head_s * 2 / 3 : 0.0);
    comm.duration_s = rc * c.layer_backward_comm_s + (n - rc) * c.layer_plain_backward_comm_s;
    if (rc > 0) compute.allocate_bytes = c.recompute_working_bytes;
    comm.free_bytes =
        activations + (last ? c.logits_bytes : 0.0) + (rc > 0 ? c.recompute_working_bytes : 0.0);
    if (split_backward) {  // the input-gradient half; its weight half frees the activations
      compute.duration_s = (rc * c.layer_backward_s + (n - rc) * c.layer_plain_backward_s) / 2 +
                           (first ? c.embedding_s / 3 : 0.0) + (last ? c.head_s / 3 : 0.0);
      compute.name = label + " (input gradient)";
      comm.free_bytes = rc > 0 ? c.recompute_working_bytes : 0.0;
    }
  }
  const int compute_id = prog.add(compute);
  comm.after = {compute_id};
  const int comm_id = prog.add(comm);
  done_pass[{vs, op.microbatch, op.forward}] = comm_id;
  last_blocking[static_cast<std::size_t>(i)] = comm_id;
  // The send to the neighbour virtual stage: blocking (the next pass waits for it), or with
  // Megatron-Core's p2p overlap (interleaved) posted ahead: the next pass goes on, the receiver
  // waits only for the bytes on the wire.
  const bool sends = op.forward ? vs < vstages - 1 : vs > 0;
  const bool overlapped = t.overlap_p2p_comm && v > 1;
  if (sends) {
    Task send;
    send.device = i;
    send.stream = kPipeline;
    send.link = p2p_link[static_cast<std::size_t>(i)];
    send.duration_s = overlapped ? 0.0 : c.p2p_send_s - c.p2p_bytes / nic_bw;  // the fixed overhead
    send.bytes = c.p2p_bytes;
    send.after = {comm_id};
    send.name = fmt::format("send {} mb {}{}", op.forward ? "activation" : "gradient",
                            op.microbatch, overlapped ? " (overlapped)" : "");
    send.phase = "send";
    send.stage = vs;
    send.microbatch = op.microbatch;
    const int send_id = prog.add(send);
    sent[{vs, op.microbatch, op.forward}] = send_id;
    if (!overlapped) last_blocking[static_cast<std::size_t>(i)] = send_id;
  } else if (p > 1 && !overlapped) {
    // The ends of the pipeline send nothing here, but the calibrated model charges them a
    // send's time per micro-batch like every stage (it absorbs what the ends do instead:
    // loading the batch, the loss); replayed as its own event so both agree.
    Task end_of_pipeline;
    end_of_pipeline.device = i;
    end_of_pipeline.stream = kPipeline;
    end_of_pipeline.duration_s = c.p2p_send_s;
    end_of_pipeline.after = {comm_id};
    end_of_pipeline.name = fmt::format("pipeline end mb {} (calibrated)", op.microbatch);
    end_of_pipeline.phase = "pipeline end";
    end_of_pipeline.stage = vs;
    end_of_pipeline.microbatch = op.microbatch;
    last_blocking[static_cast<std::size_t>(i)] = prog.add(end_of_pipeline);
  }
  if (!op.forward && !split_backward) {
    last_backward[static_cast<std::size_t>(i)] = comm_id;
    last_backward_inputs[static_cast<std::size_t>(i)] = compute.after;
    if (t.zero_stage == 2 && parts[static_cast<std::size_t>(i)].reduce_scatter_s > 0) {
      // Reduce-scatter this chunk's gradients: after the pass, or (overlapped) bucket by
      // bucket during it; without overlap the next pass waits for it.
      const int rs = dp_transfer(i, parts[static_cast<std::size_t>(i)].reduce_scatter_s / v,
                                 fmt::format("reduce-scatter mb {}", op.microbatch),
                                 t.overlap_grad_reduce ? compute.after : std::vector<int>{comm_id},
                                 vs, op.microbatch);
      reduce_scatters[static_cast<std::size_t>(i)].push_back(rs);
      if (!t.overlap_grad_reduce) last_blocking[static_cast<std::size_t>(i)] = rs;
    }
  }
  return true;
}

void ProgramBuilder::add_sync_and_step(int i) {
  const auto [dense, expert] = cost.stage_parameters(c, t, i, split[static_cast<std::size_t>(i)]);
  const SyncParts& sp = parts[static_cast<std::size_t>(i)];
  // ZeRO 0: one all-reduce at the end; ZeRO 1: a reduce-scatter of the gradients and an
  // all-gather of the updated 16-bit weights (that one in the next forward when overlapped,
  // not replayed here); ZeRO 2: the weights gathered once after the per-micro-batch
  // reduce-scatters; ZeRO 3: nothing more.
  const double sync_s =
      t.zero_stage == 0 ? sp.allreduce_s
      : t.zero_stage == 1
          ? sp.reduce_scatter_s + (t.overlap_param_gather ? 0.0 : sp.weight_gather_s)
      : t.zero_stage == 2 ? sp.weight_gather_s
                          : 0.0;
  std::vector<int> sync_after = {last_backward[static_cast<std::size_t>(i)]};
  if (t.overlap_grad_reduce && t.zero_stage <= 1)
    sync_after = last_backward_inputs[static_cast<std::size_t>(i)];
  if (t.zero_stage >= 2 && !reduce_scatters[static_cast<std::size_t>(i)].empty())
    sync_after = {reduce_scatters[static_cast<std::size_t>(i)].back()};
  int before_optimizer = t.zero_stage >= 2 && !reduce_scatters[static_cast<std::size_t>(i)].empty()
                             ? reduce_scatters[static_cast<std::size_t>(i)].back()
                             : last_backward[static_cast<std::size_t>(i)];
  if (sync_s > 0) {
    Task sync;
    sync.device = i;
    sync.stream = kDataParallel;
    sync.link = dp_link[static_cast<std::size_t>(i)];
    sync.bytes = sync_s * nic_bw;  // its time at the link's full bandwidth
    sync.after = sync_after;
    sync.name = t.zero_stage == 2 ? "gather weights" : "gradient sync";
    sync.phase = "gradient sync";
    sync.stage = i;
    const int sync_id = prog.add(sync);
    before_optimizer = sync_id;
  }
  Task step;
  step.device = i;
  step.stream = kCompute;
  step.duration_s = cost.optimizer_step_s(t, dense, expert);
  step.after = {before_optimizer, last_backward[static_cast<std::size_t>(i)]};
  if (last_blocking[static_cast<std::size_t>(i)] >= 0)
    step.after.push_back(last_blocking[static_cast<std::size_t>(i)]);
  step.name = "optimizer step";
  step.phase = "optimizer";
  step.stage = i;
  prog.add(step);
}

}  // namespace

Program transformer_program(const AnalyticCostModel& cost, const TrainingConfig& t,
                            Schedule schedule) {
  cost.check(t);
  if (schedule == Schedule::kLayerByLayer)
    throw FieldError("schedule",
                     " layer-by-layer: a transformer pipeline replays under gpipe, 1f1b, "
                     "interleaved-1f1b or zero-bubble");
  if (schedule == Schedule::kZeroBubble && t.zero_stage >= 2)
    throw FieldError("schedule",
                     " zero-bubble: not with ZeRO 2 or 3 (their reduce-scatters follow whole "
                     "backward passes)");
  if ((schedule == Schedule::kInterleaved) != (t.vpp > 1))
    throw FieldError("schedule",
                     fmt::format(" {}: {}", schedule_name(schedule),
                                 t.vpp > 1 ? "a plan with virtual stages runs interleaved-1f1b"
                                           : "interleaved-1f1b needs virtual stages (vpp > 1)"));
  ProgramBuilder b(cost, t, schedule);
  b.add_devices();
  const int m = static_cast<int>(t.microbatches());
  std::vector<std::vector<Op>> orders;
  for (int i = 0; i < t.pp; ++i) orders.push_back(device_order(schedule, t.pp, t.vpp, m, i));
  std::vector<std::size_t> passes;
  for (const auto& o : orders) passes.push_back(o.size());
  place_in_dependency_order(passes, [&](int i, std::size_t position) {
    const Op& op = orders[static_cast<std::size_t>(i)][position];
    return op.weight ? b.place_weight_half(i, op) : b.place_pass(i, op);
  });
  for (int i = 0; i < t.pp; ++i) b.add_sync_and_step(i);
  Program& prog = b.prog;
  // The allocator's fragmentation grows with the memory allocated and freed in the iteration.
  const double transient = 1 + cost.calibration().allocator_fragmentation;
  for (auto& task : prog.tasks) {
    task.allocate_bytes *= transient;
    task.free_bytes *= transient;
  }
  return std::move(prog);
}

TransformerSimulation simulate_transformer(const AnalyticCostModel& cost, const TrainingConfig& t,
                                           Schedule schedule) {
  TransformerSimulation s;
  s.schedule = schedule;
  s.result = simulate(transformer_program(cost, t, schedule));
  s.iteration_time_s = s.result.makespan_s + cost.calibration().iteration_overhead_s;
  const AnalyticResult a = cost.evaluate(t);
  s.analytic_time_s = a.iteration_time_s;
  s.analytic_peak_bytes = a.memory.peak_bytes;
  s.difference = s.iteration_time_s / s.analytic_time_s - 1;
  return s;
}

}  // namespace paraplan::sim
