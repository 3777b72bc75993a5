#include "api/plan_mixed.h"

#include <fmt/format.h>

#include <limits>

#include "api/inputs.h"
#include "ir/error.h"

namespace paraplan::api {
namespace {

LlmSearchSettings homogeneous_settings(const MixedSearchSettings& s, int devices) {
  LlmSearchSettings h;
  h.devices = devices;
  h.global_batch = s.global_batch;
  h.seq_len = s.seq_len;
  h.attention = s.attention;
  h.top_k = 1;
  return h;
}

// The type-blind plan on the real devices: as a mixed pipeline when every stage sits on one
// device type (Megatron's rank order: stage i holds devices [i·w, (i+1)·w), w = tp · dp), else
// paced by the slowest type.
void price_blind(const MixedAnalyticModel& mixed, const MixedTransformerPlanRequest& rq,
                 TypeBlindPlan& blind) {
  const TrainingConfig& t = blind.plan->config;
  const Cluster& c = rq.cluster;
  std::vector<int> type_of_device;
  for (int m = 0; m < c.machine_count(); ++m)
    for (int k = 0; k < c.machine_sizes[static_cast<std::size_t>(m)]; ++k)
      type_of_device.push_back(c.machine_device_type[static_cast<std::size_t>(m)]);
  const int width = t.tp * t.cp * t.dp;
  bool by_stage = t.pp > 1 && t.cp == 1 && t.ep == 1 && t.vpp == 1 && t.zero_stage <= 2 &&
                  t.recompute_layers == 0;
  MixedConfig mc;
  for (int stage = 0; by_stage && stage < t.pp; ++stage) {
    const int type = type_of_device[static_cast<std::size_t>(stage * width)];
    for (int d = stage * width; d < (stage + 1) * width; ++d)
      by_stage = by_stage && type_of_device[static_cast<std::size_t>(d)] == type;
    if (!mc.segments.empty() && mc.segments.back().device_type == type)
      ++mc.segments.back().pp;
    else
      mc.segments.push_back({type, t.tp, t.dp, 1});
  }
  if (by_stage) try {
      mc.seq_len = t.seq_len;
      mc.global_batch = t.global_batch;
      mc.samples_per_microbatch = t.micro_batch * t.dp;
      mc.recompute = t.recompute;
      mc.sequence_parallel = t.sequence_parallel;
      mc.zero_stage = t.zero_stage;
      mc.overlap_grad_reduce = t.overlap_grad_reduce;
      mc.attention = t.attention;
      mc.stage_layers = blind.plan->result.stage_layers;
      const MixedResult r = mixed.evaluate(mc);
      blind.iteration_time_s = r.iteration_time_s;
      blind.fits = r.fits;
      blind.priced_as = "stages";
      return;
    } catch (const Error&) {
      // a stage's share of the rules broken on its own type: price it at the slowest pace below
    }
  blind.iteration_time_s = 0;
  blind.fits = true;
  for (std::size_t k = 0; k < mixed.devices_of_type().size(); ++k) {
    if (mixed.devices_of_type()[k].empty()) continue;
    const AnalyticCostModel cost(rq.model, mixed.type_cluster(static_cast<int>(k), rq.devices),
                                 rq.calibrations[k]);
    const AnalyticResult r = cost.evaluate(t);
    blind.iteration_time_s = std::max(blind.iteration_time_s, r.iteration_time_s);
    blind.fits = blind.fits && r.fits;
  }
  blind.priced_as = "slowest type";
}

}  // namespace

MixedTransformerPlanRequest mixed_transformer_request(TransformerConfig model, Cluster cluster,
                                                      std::string cluster_name, int devices,
                                                      const TransformerKnobs& k, std::int64_t batch,
                                                      int top, std::string blind_device_type) {
  const std::pair<bool, const char*> fixed[] = {{k.micro_batch > 0, "micro_batch"},
                                                {k.tp > 0, "tp"},
                                                {k.cp > 0, "cp"},
                                                {k.pp > 0, "pp"},
                                                {k.dp > 0, "dp"},
                                                {k.ep > 0, "ep"},
                                                {k.vpp > 0, "vpp"},
                                                {!k.recompute.empty(), "recompute"},
                                                {k.sequence_parallel, "sequence_parallel"},
                                                {k.zero >= 0, "zero"},
                                                {k.overlap_grad_reduce >= 0, "overlap_grad_reduce"},
                                                {!k.stage_layers.empty(), "stage_layers"},
                                                {k.moe_capacity_factor > 0, "moe_capacity_factor"}};
  for (const auto& [given, field] : fixed)
    if (given)
      throw FieldError(field,
                       ": the planner of a cluster of several device types searches every "
                       "knob but seq_len and attention (fixed knobs are for clusters of "
                       "one type)");
  if (model.moe())
    throw FieldError("model", ": " + model.name +
                                  " is a mixture of experts; the planner of a cluster of several "
                                  "device types takes dense transformers");
  MixedTransformerPlanRequest r;
  r.calibrations = load_calibrations(k.calibration, cluster);
  r.model = std::move(model);
  r.cluster = std::move(cluster);
  r.cluster_name = std::move(cluster_name);
  r.devices = devices;
  r.settings.global_batch = batch;
  r.settings.seq_len = k.seq_len > 0 ? k.seq_len : 2048;
  r.settings.attention = attention(k.attention);
  r.settings.top_k = top;
  r.blind_device_type = std::move(blind_device_type);
  return r;
}

MixedTransformerPlanResult plan_mixed_transformer(const MixedTransformerPlanRequest& rq) {
  const MixedAnalyticModel mixed(rq.model, rq.cluster, rq.calibrations, rq.devices);
  const auto& types = rq.cluster.device_types;
  int present = 0;
  for (const auto& ids : mixed.devices_of_type()) present += ids.empty() ? 0 : 1;
  if (present < 2)
    throw Error(ErrorKind::kUsage, "",
                "the job's devices are of one type; the mixed planner needs two");
  MixedTransformerPlanResult out;
  out.search = search_llm_mixed(mixed, rq.settings);
  double best = out.search.top.empty() ? std::numeric_limits<double>::infinity()
                                       : out.search.top[0].result.iteration_time_s;
  for (std::size_t k = 0; k < types.size(); ++k) {
    const int n = static_cast<int>(mixed.devices_of_type()[k].size());
    if (n == 0) continue;
    SingleTypePlan alone{types[k].name, n, std::nullopt};
    const AnalyticCostModel cost(rq.model, mixed.type_cluster(static_cast<int>(k), n),
                                 rq.calibrations[k]);
    LlmSearchResult r = search_llm(cost, homogeneous_settings(rq.settings, n));
    if (!r.top.empty()) {
      alone.best = r.top[0];
      if (alone.best->result.iteration_time_s < best) {
        best = alone.best->result.iteration_time_s;
        out.best_alone = out.alone.size();
      }
    }
    out.alone.push_back(std::move(alone));
  }
  if (!(best < std::numeric_limits<double>::infinity()))
    throw Error(ErrorKind::kInfeasible, "",
                fmt::format("{} on {} devices of {}: no plan fits in memory (mixed pipelines and "
                            "each device type alone searched)",
                            rq.model.name, rq.devices, rq.cluster_name));
  out.best_iteration_time_s = best;

  // The type-blind baseline.
  int blind = -1;
  for (std::size_t k = 0; k < types.size(); ++k) {
    if (mixed.devices_of_type()[k].empty()) continue;
    if (rq.blind_device_type.empty()
            ? blind < 0 || types[k].peak_flops_per_s <
                               types[static_cast<std::size_t>(blind)].peak_flops_per_s
            : types[k].name == rq.blind_device_type)
      blind = static_cast<int>(k);
  }
  if (blind < 0)
    throw FieldError("model-device",
                     " \"" + rq.blind_device_type + "\": not a device type of the job's devices");
  out.blind.device_type = types[static_cast<std::size_t>(blind)].name;
  const AnalyticCostModel cost(rq.model, mixed.type_cluster(blind, rq.devices),
                               rq.calibrations[static_cast<std::size_t>(blind)]);
  LlmSearchResult r = search_llm(cost, homogeneous_settings(rq.settings, rq.devices));
  if (!r.top.empty()) {
    out.blind.plan = r.top[0];
    price_blind(mixed, rq, out.blind);
  }
  return out;
}

}  // namespace paraplan::api
