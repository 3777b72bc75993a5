#include "report/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "cost/placement.h"
#include "io/transformer_json.h"
#include "ir/knobs.h"
#include "ir/units.h"
#include "render/html_report.h"
#include "render/network_svg.h"

namespace paraplan::report {
namespace {

constexpr double kGiB = 1073741824.0;

// Each stage's analytic peak in its parts, and how its activations are counted.
render::ReportData::Table memory_table(const AnalyticResult& a) {
  render::ReportData::Table table;
  table.title = "Memory per stage (analytic, GiB)";
  table.header = {"stage",
                  "weights",
                  "gradients",
                  "optimizer",
                  "activations",
                  "buffers",
                  "allocator fragmentation",
                  "runtime reserve",
                  "peak"};
  for (std::size_t i = 0; i < a.stages.size(); ++i) {
    const MemoryBreakdown& m = a.stages[i].memory;
    table.rows.push_back({std::to_string(i), fmt::format("{:.2f}", m.weights_bytes / kGiB),
                          fmt::format("{:.2f}", m.gradients_bytes / kGiB),
                          fmt::format("{:.2f}", m.optimizer_bytes / kGiB),
                          fmt::format("{:.2f}", m.activations_bytes / kGiB),
                          fmt::format("{:.2f}", m.buffers_bytes / kGiB),
                          fmt::format("{:.2f}", m.fragmentation_bytes / kGiB),
                          fmt::format("{:.2f}", m.reserved_bytes / kGiB),
                          fmt::format("{:.2f}", m.peak_bytes / kGiB)});
  }
  table.note = fmt::format(
      "The analytic peak is what a device must hold: every part above at its largest (±{:.1f} %, "
      "the allocator's peaks of the measured runs). Activations are those of the micro-batches "
      "a rank holds at once: pp − s on stage s under 1F1B; under the interleaved schedule the "
      "model chunks rank s warms up, (pp − s − 1)·2 + (vpp − 1)·pp, and one more, each 1/vpp of "
      "its layers. The simulated peak in the stages' table replays the schedule and holds what "
      "it runs; the two agree where the schedules do.",
      100 * kPeakBand);
  return table;
}

// The plans the search ranked after the chosen one, with their deltas against the band.
render::ReportData::Table runners_up_table(const AnalyticResult& chosen, const TrainingConfig& t,
                                           const TransformerReportExtras& extras) {
  render::ReportData::Table table;
  table.title = "Runners-up";
  table.header = {"rank",
                  "tp · cp · pp · dp · ep",
                  "vpp",
                  "layers per stage",
                  "micro-batch",
                  "recompute",
                  "ZeRO",
                  "iteration (s)",
                  "against the chosen",
                  "peak memory (GiB)"};
  auto layers = [](const TrainingConfig& c) {
    return c.stage_layers.empty() ? std::string("even")
                                  : fmt::format("{}", fmt::join(c.stage_layers, ","));
  };
  auto row = [&](const std::string& rank, const TrainingConfig& c, const AnalyticResult& r,
                 const std::string& against) {
    table.rows.push_back({rank, fmt::format("{} · {} · {} · {} · {}", c.tp, c.cp, c.pp, c.dp, c.ep),
                          std::to_string(c.vpp), layers(c), std::to_string(c.micro_batch),
                          io::recompute_text(c), std::to_string(c.zero_stage),
                          fmt::format("{:.4f}", r.iteration_time_s), against,
                          fmt::format("{:.2f}", r.memory.peak_bytes / kGiB)});
  };
  row("chosen", t, chosen, "—");
  for (std::size_t i = 0; i < extras.runners_up.size(); ++i) {
    const AnalyticResult& r = extras.runners_up[i].result;
    const double delta = r.iteration_time_s / chosen.iteration_time_s - 1;
    row(std::to_string(i + 2), extras.runners_up[i].config, r,
        fmt::format("{:+.1f} %{}", 100 * delta,
                    std::abs(delta) <= extras.time_band ? " (a tie: within the band)" : ""));
  }
  table.note = fmt::format(
      "Times within ±{:.1f} % (the stack's measured error) of each other are ties the model "
      "cannot order; among ties the leanest is chosen.",
      100 * extras.time_band);
  return table;
}

}  // namespace

std::vector<render::PlotSeries> frontier_series(const std::vector<LlmCandidate>& points) {
  std::map<int, render::PlotSeries> by_devices;
  for (const auto& c : points) {
    auto& s = by_devices[c.config.devices()];
    s.name = fmt::format("{} devices", c.config.devices());
    s.points.emplace_back(c.result.memory.peak_bytes / 1073741824.0, c.result.iteration_time_s);
  }
  std::vector<render::PlotSeries> series;
  for (auto it = by_devices.rbegin(); it != by_devices.rend(); ++it) series.push_back(it->second);
  return series;
}

std::string frontier_svg(const std::vector<LlmCandidate>& points, const std::string& title) {
  return render::scatter_svg(frontier_series(points), title, "peak memory per device (GiB)",
                             "iteration time (s)");
}

std::string transformer_report(const AnalyticCostModel& cost, const TrainingConfig& t,
                               const sim::TransformerSimulation& s,
                               const std::string& cluster_label, const LlmFrontierResult& f,
                               int frontier_devices, const TransformerReportExtras& extras) {
  const AnalyticResult a = cost.evaluate(t);
  const TransformerConfig& m = cost.model();
  const DeviceType& device = cost.cluster().device_types.at(0);
  render::ReportData d;
  d.title = fmt::format("paraplan: {} on {} × {}", m.name, t.devices(), device.name);
  d.summary = {
      {"model", fmt::format("{} ({:.2f} B parameters, {} layers, hidden {})", m.name,
                            m.parameters() / 1e9, m.num_layers, m.hidden_size)},
      {"cluster",
       fmt::format("{}: {} × {} ({}, {:.0f} TFLOP/s peak)", cluster_label, t.devices(), device.name,
                   format_bytes(device.memory_bytes), device.peak_flops_per_s / 1e12)},
      {"batch",
       fmt::format("{} sequences × {} tokens, micro-batch {}, {} micro-batches per pipeline",
                   t.global_batch, t.seq_len, t.micro_batch, t.microbatches())},
      {"parallelism", fmt::format("tp {} · cp {} · pp {} · dp {} · ep {}, vpp {}", t.tp, t.cp, t.pp,
                                  t.dp, t.ep, t.vpp)},
      {"memory savers",
       fmt::format("recompute {}{}, ZeRO {}{}, {} attention", io::recompute_text(t),
                   t.sequence_parallel ? ", sequence parallel" : "", t.zero_stage,
                   t.overlap_grad_reduce ? ", overlapped gradient reduction" : "",
                   io::attention_text(t.attention))},
      {"iteration time (analytic)", fmt::format("{:.4f} s", a.iteration_time_s)},
      {"iteration time (simulated)",
       fmt::format("{:.4f} s ({:+.2f}% against the analytic model), {} schedule",
                   s.iteration_time_s, 100 * s.difference, sim::schedule_name(s.schedule))},
      {"throughput", fmt::format("{:.0f} tokens/s, {:.1f} TFLOP/s per device, MFU {:.1f}%",
                                 a.tokens_per_s, a.tflops_per_device, 100 * a.mfu)},
      {"bubble (simulated)",
       fmt::format("{:.1f}% of the devices' time", 100 * s.result.bubble_fraction)},
      {"peak memory",
       fmt::format("{} of {} per device: {} (incl. {} runtime reserve and {} allocator "
                   "fragmentation)",
                   format_bytes(a.memory.peak_bytes), format_bytes(device.memory_bytes),
                   a.fits ? "fits" : "OUT OF MEMORY", format_bytes(a.memory.reserved_bytes),
                   format_bytes(a.memory.fragmentation_bytes))}};
  d.stage_header = {"stage",
                    "layers",
                    "time per micro-batch (s)",
                    "peak memory, analytic (GiB)",
                    "simulated busy (s)",
                    "simulated peak (GiB)"};
  for (std::size_t i = 0; i < a.stages.size(); ++i)
    d.stage_rows.push_back({std::to_string(i), std::to_string(a.stages[i].layers),
                            fmt::format("{:.5f}", a.stages[i].time_per_microbatch_s),
                            fmt::format("{:.2f}", a.stages[i].memory.peak_bytes / kGiB),
                            fmt::format("{:.4f}", s.result.devices[i].busy_s),
                            fmt::format("{:.2f}", s.result.devices[i].peak_bytes / kGiB)});
  d.tables.push_back(memory_table(a));
  if (!extras.runners_up.empty()) d.tables.push_back(runners_up_table(a, t, extras));
  d.launch = extras.launch;
  d.frontier_chosen = std::pair{a.memory.peak_bytes / kGiB, a.iteration_time_s};
  d.timeline = &s.result.timeline;
  for (std::size_t i = 0; i < s.result.devices.size(); ++i)
    d.memory.push_back({s.result.timeline.devices[i], s.result.devices[i].peak_bytes / kGiB,
                        device.memory_bytes / kGiB});
  d.frontier = frontier_series(f.points);
  d.notes = fmt::format(
      "One pipeline replica is simulated (the data-, tensor- and context-parallel "
      "replicas run the same program). The frontier holds {} non-dominated plans "
      "over (iteration time, peak memory per device, devices) on up to {} devices.",
      f.points.size(), frontier_devices);
  return render::html_report(d);
}

std::string pipeline_report(const Model& model, const Plan& plan, const PiperSettings& settings,
                            const sim::PipelineSimulation& s,
                            const PipelineFrontierResult* frontier, const SummaryRows& extra,
                            const Topology* topology) {
  render::ReportData d;
  d.title = fmt::format("paraplan: {} ({} stages, {} devices)", model.name, plan.stages.size(),
                        plan.devices_used);
  d.summary = {{"model", fmt::format("{} ({} layers)", model.name, model.size())},
               {"cost model",
                "piper (time per micro-batch of the bottleneck stage, in the profile's time unit)"},
               {"objective", fmt::format("{:.9g}", plan.objective)},
               {"devices", fmt::format("{} of {}, {} per device, {:.6g} bytes/s between devices",
                                       plan.devices_used, settings.max_devices,
                                       format_bytes(settings.memory_per_device_bytes),
                                       settings.bandwidth_bytes_per_s)},
               {"micro-batches", std::to_string(settings.microbatches)},
               {"simulated iteration", fmt::format("{:.6g} (bound N × objective {:.6g}, {:+.2f}%)",
                                                   s.makespan_s, s.bound_s, 100 * s.difference)},
               {"bubble (simulated)",
                fmt::format("{:.1f}% of the devices' time", 100 * s.result.bubble_fraction)}};
  if (const auto* detail = plan.get_if<PipelineDetail>(); detail && detail->placement) {
    const PlacementFigures& p = *detail->placement;
    d.summary.push_back(
        {"placement",
         fmt::format("on {}: slowest stage {:.6g} s per micro-batch on its links, rank order "
                     "{:.6g} s ({:+.1f} %); {}",
                     p.cluster, p.cost_s, p.rank_order_cost_s,
                     100 * (p.cost_s / p.rank_order_cost_s - 1),
                     p.exact ? "optimal"
                             : fmt::format("within {:.1f} % of a lower bound",
                                           100 * (p.cost_s / p.lower_bound_s - 1)))});
  }
  d.summary.insert(d.summary.end(), extra.begin(), extra.end());
  if (topology != nullptr) {
    const PlacementCostModel cost(model, plan, *topology, settings.microbatches);
    const std::vector<int> place = cost.read(plan);
    const std::vector<double> bytes = cost.channel_bytes(place);
    render::NetworkFigure figure;
    figure.device_labels.assign(static_cast<std::size_t>(topology->device_count()), "");
    figure.device_groups.assign(static_cast<std::size_t>(topology->device_count()), -1);
    for (int i = 0; i < cost.slot_count(); ++i) {
      const auto& slot = cost.slots()[static_cast<std::size_t>(i)];
      const auto device = static_cast<std::size_t>(place[static_cast<std::size_t>(i)]);
      figure.device_groups[device] = slot.stage;
      figure.device_labels[device] = fmt::format("{}/{}/{}", slot.stage, slot.replica, slot.rank);
    }
    for (int e = 0; e * 2 < topology->channel_count(); ++e)
      figure.link_busy_s.push_back(
          std::max(bytes[static_cast<std::size_t>(2 * e)],
                   bytes[static_cast<std::size_t>(2 * e + 1)]) /
          topology->edges()[static_cast<std::size_t>(e)].bandwidth_bytes_per_s);
    d.network_svg = render::network_svg(*topology, figure);
  }
  d.stage_header = {
      "stage",  "layers", "d", "t", "in flight", "time per sample", "memory per device (GiB)",
      "devices"};
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const Stage& st = plan.stages[i];
    const std::string ids = fmt::format("{}", fmt::join(st.device_ids, " "));
    d.stage_rows.push_back(
        {std::to_string(i), std::to_string(st.layers.size()), std::to_string(st.data_parallel),
         std::to_string(st.tensor_parallel), std::to_string(st.inflight_microbatches),
         fmt::format("{:.6g}", st.time), fmt::format("{:.3f}", st.memory_bytes / kGiB), ids});
  }
  d.timeline = &s.result.timeline;
  for (std::size_t i = 0; i < s.result.devices.size(); ++i)
    d.memory.push_back({s.result.timeline.devices[i], s.result.devices[i].peak_bytes / kGiB,
                        settings.memory_per_device_bytes / kGiB});
  if (frontier) {
    render::PlotSeries series{fmt::format("up to {} devices", settings.max_devices), {}};
    for (const auto& p : frontier->points)
      series.points.emplace_back(p.objectives.peak_bytes / kGiB, p.objectives.time_s);
    d.frontier = {series};
  }
  d.frontier_y_title = "time per sample (Piper's objective)";
  d.notes =
      "Every data-parallel replica of every stage is simulated; forward is one third of a "
      "profile's per-micro-batch time. The frontier uses Piper's objective on the time axis.";
  return render::html_report(d);
}

std::string dapple_report(const std::string& title, const Plan& plan, const sim::Result& r,
                          const SummaryRows& extra) {
  render::ReportData d;
  d.title = fmt::format("paraplan: {}, DAPPLE plan with {} stage(s)", title, plan.stages.size());
  d.summary = {
      {"cost model", "dapple (latency of one iteration, seconds)"},
      {"DAPPLE's latency", fmt::format("{:.6g} s", plan.objective)},
      {"simulated", fmt::format("{:.6g} s ({:+.2f}%; the all-reduce tail is not replayed)",
                                r.makespan_s, 100 * (r.makespan_s / plan.objective - 1))},
      {"bubble (simulated)", fmt::format("{:.1f}% of the devices' time", 100 * r.bubble_fraction)}};
  d.summary.insert(d.summary.end(), extra.begin(), extra.end());
  d.stage_header = {"stage", "GPUs", "compute per micro-batch (s)", "hop (s)"};
  for (std::size_t i = 0; i < plan.stages.size(); ++i)
    d.stage_rows.push_back({std::to_string(i), std::to_string(plan.stages[i].data_parallel),
                            fmt::format("{:.6g}", plan.stages[i].compute_time),
                            fmt::format("{:.6g}", plan.stages[i].communication_time)});
  d.timeline = &r.timeline;
  d.notes = "DAPPLE has no memory model, so there is no memory chart or time–memory frontier.";
  return render::html_report(d);
}

std::string mixed_report(const std::string& model_name, const std::string& cluster_label,
                         const Cluster& cluster, const Plan& plan, const sim::Result& r) {
  const MixedTrainingPlan& m = plan.as<MixedTrainingPlan>();
  render::ReportData d;
  d.title =
      fmt::format("paraplan: {} on {} devices of {} ({} stages over {} segments)", model_name,
                  plan.devices_used, cluster_label, plan.stages.size(), m.config.segments.size());
  d.summary = {
      {"cost model", "analytic, per device type (mixed pipeline: 1F1B paced by its slowest stage)"},
      {"iteration time",
       fmt::format("{:.4f} s analytic; simulated {:.4f} s ({:+.2f}%)", plan.objective, r.makespan_s,
                   100 * (r.makespan_s / plan.objective - 1))},
      {"throughput", fmt::format("{:.0f} tokens/s, {:.1f} TFLOP/s per device, MFU {:.1f}%",
                                 m.tokens_per_s, m.tflops_per_device, 100 * m.mfu)},
      {"batch",
       fmt::format("{} sequences of {} tokens, {} micro-batches of {}", m.config.global_batch,
                   m.config.seq_len, plan.microbatches, m.config.samples_per_microbatch)},
      {"bubble (simulated)", fmt::format("{:.1f}% of the stages' time", 100 * r.bubble_fraction)}};
  d.stage_header = {
      "stage",    "device type",   "tp × dp",           "layers", "time per micro-batch (s)",
      "sync (s)", "optimizer (s)", "peak memory (GiB)", "devices"};
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const Stage& st = plan.stages[i];
    const DeviceType& type = cluster.device_types.at(static_cast<std::size_t>(st.device_type));
    d.stage_rows.push_back(
        {std::to_string(i), type.name, fmt::format("{} × {}", st.tensor_parallel, st.data_parallel),
         std::to_string(st.layers.size()), fmt::format("{:.5f}", st.time),
         fmt::format("{:.4f}", st.allreduce_time), fmt::format("{:.4f}", st.optimizer_time),
         fmt::format("{:.2f} of {:.2f}", st.memory_bytes / kGiB, type.memory_limit_bytes() / kGiB),
         fmt::format("{}", fmt::join(st.device_ids, " "))});
    if (i < r.devices.size())
      d.memory.push_back({r.timeline.devices[i], r.devices[i].peak_bytes / kGiB,
                          type.memory_limit_bytes() / kGiB});
  }
  d.timeline = &r.timeline;
  d.notes =
      "One lane per stage: its devices work in lockstep on their share of each micro-batch "
      "(forward a third of its time per micro-batch). The mixed model has no time–memory "
      "frontier yet.";
  return render::html_report(d);
}

std::vector<IntraOpRow> intra_op_rows(const Model& model, const Plan& plan) {
  std::vector<IntraOpRow> rows;
  for (const LayerSplit& ls : plan.as<IntraOpDetail>().layer_splits) {
    const Layer& layer = model.layers.at(static_cast<std::size_t>(ls.layer));
    rows.push_back({layer.name, layer.op ? std::string(op_kind_name(layer.op->kind)) : "",
                    layer.op ? layer.op->split_text(ls.split) : "", ls.devices, ls.compute,
                    ls.communication + ls.redistribution});
  }
  return rows;
}

std::string intra_op_report(const std::string& model_name, int devices, double flops_per_s,
                            double objective, const std::vector<IntraOpRow>& rows,
                            const sim::Result& r, const std::string& graph_svg,
                            const std::vector<render::PlotSeries>& frontier,
                            const SummaryRows& extra) {
  render::ReportData d;
  const double step = objective / flops_per_s;
  d.title = fmt::format("paraplan: {} on {} devices (per-layer sharding)", model_name, devices);
  d.summary = {
      {"model", fmt::format("{} ({} layers)", model_name, rows.size())},
      {"cost model", "pase (FLOP-equivalents per device)"},
      {"objective", fmt::format("{:.6g} FLOP-equivalents per device", objective)},
      {"step time", fmt::format("{:.6g} s at {:.4g} TFLOP/s per device; simulated {:.6g} s", step,
                                flops_per_s / 1e12, r.makespan_s)}};
  d.summary.insert(d.summary.end(), extra.begin(), extra.end());
  d.stage_title = "Layers";
  d.stage_header = {"layer",
                    "type",
                    "split (dim/parts)",
                    "devices",
                    "compute (FLOP-eq.)",
                    "collectives + re-layout (FLOP-eq.)",
                    "share of the step"};
  for (const IntraOpRow& row : rows)
    d.stage_rows.push_back(
        {row.name, row.type, row.split, std::to_string(row.devices),
         fmt::format("{:.6g}", row.compute), fmt::format("{:.6g}", row.collectives),
         fmt::format("{:.1f}%",
                     objective > 0 ? 100 * (row.compute + row.collectives) / objective : 0)});
  d.timeline = &r.timeline;
  d.graph_svg = graph_svg;
  d.frontier = frontier;
  d.frontier_y_title = "step time (s)";
  std::size_t points = 0;
  for (const auto& series : frontier) points += series.points.size();
  d.notes = frontier.empty()
                ? "Layers run one after the other on all devices. The time–memory frontier is "
                  "beyond its limits here (paraplan frontier --planner intra-op with a coarser "
                  "--memory-step or --powers-of-two)."
                : fmt::format(
                      "Layers run one after the other on all devices. The frontier holds {} "
                      "shardings no other beats in step time, memory per device and devices "
                      "used (memory step 0.01; memory: weights, gradients, Adam's state and "
                      "kept activations of each layer's shard, fp32).",
                      points);
  return render::html_report(d);
}

}  // namespace paraplan::report
