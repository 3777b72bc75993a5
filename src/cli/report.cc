#include "cli/report.h"

#include <fmt/format.h>

#include "cli/frontier_command.h"
#include "cli/transformer_common.h"
#include "io/html_report.h"
#include "io/transformer_json.h"
#include "ir/units.h"
#include "sim/transformer_program.h"

namespace paraplan::cli {

std::string transformer_report(const AnalyticCostModel& cost, const TrainingConfig& t,
                               const std::string& cluster_label, const LlmSearchSettings& frontier_settings) {
  const AnalyticResult a = cost.evaluate(t);
  const sim::TransformerSimulation s = sim::simulate_transformer(cost, t, sim::default_schedule(t));
  const TransformerConfig& m = cost.model();
  const DeviceType& device = cost.cluster().device_types.at(0);
  constexpr double kGiB = 1073741824.0;
  io::ReportData d;
  d.title = fmt::format("paraplan: {} on {} × {}", m.name, t.devices(), device.name);
  d.summary = {
      {"model", fmt::format("{} ({:.2f} B parameters, {} layers, hidden {})", m.name,
                            m.parameters() / 1e9, m.num_layers, m.hidden_size)},
      {"cluster", fmt::format("{}: {} × {} ({}, {:.0f} TFLOP/s peak)", cluster_label, t.devices(),
                              device.name, format_bytes(device.memory_bytes), device.peak_flops_per_s / 1e12)},
      {"batch", fmt::format("{} sequences × {} tokens, micro-batch {}, {} micro-batches per pipeline",
                            t.global_batch, t.seq_len, t.micro_batch, t.microbatches())},
      {"parallelism", fmt::format("tp {} · cp {} · pp {} · dp {} · ep {}, vpp {}", t.tp, t.cp, t.pp,
                                  t.dp, t.ep, t.vpp)},
      {"memory savers", fmt::format("recompute {}{}, ZeRO {}{}, {} attention", recompute_text(t),
                                    t.sequence_parallel ? ", sequence parallel" : "", t.zero_stage,
                                    t.overlap_grad_reduce ? ", overlapped gradient reduction" : "",
                                    io::attention_text(t.attention))},
      {"iteration time (analytic)", fmt::format("{:.4f} s", a.iteration_time_s)},
      {"iteration time (simulated)", fmt::format("{:.4f} s ({:+.2f}% against the analytic model), {} schedule",
                                                 s.iteration_time_s, 100 * s.difference,
                                                 sim::schedule_name(s.schedule))},
      {"throughput", fmt::format("{:.0f} tokens/s, {:.1f} TFLOP/s per device, MFU {:.1f}%",
                                 a.tokens_per_s, a.tflops_per_device, 100 * a.mfu)},
      {"bubble (simulated)", fmt::format("{:.1f}% of the devices' time", 100 * s.result.bubble_fraction)},
      {"peak memory", fmt::format("{} of {} per device: {} (incl. {} runtime reserve and {} allocator "
                                  "fragmentation)", format_bytes(a.memory.peak_bytes),
                                  format_bytes(device.memory_bytes), a.fits ? "fits" : "OUT OF MEMORY",
                                  format_bytes(a.memory.reserved_bytes),
                                  format_bytes(a.memory.fragmentation_bytes))}};
  d.stage_header = {"stage", "layers", "time per micro-batch (s)", "peak memory (GiB)",
                    "simulated busy (s)", "simulated peak (GiB)"};
  for (std::size_t i = 0; i < a.stages.size(); ++i)
    d.stage_rows.push_back({std::to_string(i), std::to_string(a.stages[i].layers),
                            fmt::format("{:.5f}", a.stages[i].time_per_microbatch_s),
                            fmt::format("{:.2f}", a.stages[i].memory.peak_bytes / kGiB),
                            fmt::format("{:.4f}", s.result.devices[i].busy_s),
                            fmt::format("{:.2f}", s.result.devices[i].peak_bytes / kGiB)});
  d.timeline = &s.result.timeline;
  for (std::size_t i = 0; i < s.result.devices.size(); ++i)
    d.memory.push_back({s.result.timeline.devices[i], s.result.devices[i].peak_bytes / kGiB,
                        device.memory_bytes / kGiB});
  const FrontierRun f = llm_frontier(cost, frontier_settings);
  d.frontier = frontier_series(f.points);
  d.notes = fmt::format("One pipeline replica is simulated (the data-, tensor- and context-parallel "
                        "replicas run the same program). The frontier holds {} non-dominated plans "
                        "over (iteration time, peak memory per device, devices) on up to {} devices.",
                        f.points.size(), frontier_settings.devices);
  return io::html_report(d);
}

}  // namespace paraplan::cli
