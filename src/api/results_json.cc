// The JSON documents of every job's result.
#include "api/results_json.h"

#include <fmt/format.h>

#include "api/knobs.h"
#include "api/plan_file.h"
#include "io/mixed_plan_json.h"
#include "io/native_json.h"
#include "io/transformer_json.h"

namespace paraplan::api {

io::Json evaluate_json(const TrainingConfig& t, const AnalyticResult& r, const std::string& model,
                       const std::string& cluster_name, const DeviceType& device) {
  io::Json j = priced_json(t, r, t.devices());
  j["model"] = model;
  j["cluster"] = cluster_name;
  j["memory"]["device_memory_bytes"] = device.memory_bytes;
  j["memory"]["headroom_bytes"] = device.memory_headroom_bytes;
  j["memory"]["share_of_device"] = r.memory.peak_bytes / device.memory_bytes;
  // How sure the time is: the stack's mean error on its measured sets (docs/cost-models.md).
  j["time_band"] = time_band(t.stack);
  j["peak_band"] = kPeakBand;
  return j;
}

io::Json priced_json(const TrainingConfig& t, const AnalyticResult& r, int devices) {
  const MemoryBreakdown& m = r.memory;
  auto memory_json = [](const MemoryBreakdown& mb) {
    return io::Json{{"peak_bytes", mb.peak_bytes},
                    {"weights_bytes", mb.weights_bytes},
                    {"gradients_bytes", mb.gradients_bytes},
                    {"optimizer_bytes", mb.optimizer_bytes},
                    {"activations_bytes", mb.activations_bytes},
                    {"buffers_bytes", mb.buffers_bytes},
                    {"fragmentation_bytes", mb.fragmentation_bytes},
                    {"reserved_bytes", mb.reserved_bytes}};
  };
  io::Json stages = io::Json::array();
  for (const StageFigures& st : r.stages)
    stages.push_back({{"layers", st.layers},
                      {"time_per_microbatch_s", st.time_per_microbatch_s},
                      {"peak_bytes", st.memory.peak_bytes}});
  return {{"iteration_time_s", r.iteration_time_s},
          {"tokens_per_s", r.tokens_per_s},
          {"tflops_per_device", r.tflops_per_device},
          {"mfu", r.mfu},
          {"fits", r.fits},
          {"memory", memory_json(m)},
          {"breakdown",
           {{"pipeline_s", r.pipeline_s},
            {"bubble_s", r.bubble_s},
            {"compute_per_microbatch_s", r.compute_per_microbatch_s},
            {"tp_comm_per_microbatch_s", r.tp_comm_per_microbatch_s},
            {"pp_comm_per_microbatch_s", r.pp_comm_per_microbatch_s},
            {"dp_allreduce_s", r.dp_allreduce_s},
            {"optimizer_s", r.optimizer_s}}},
          {"stages", stages},
          {"config", [&] {
             io::Json config = io::training_to_json(t);
             config["devices"] = devices;
             config["stage_layers"] = r.stage_layers;  // the split priced, even when implicit
             return config;
           }()}};
}

io::Json transformer_plan_json(const TransformerPlanRequest& request,
                               const TransformerPlanResult& result) {
  const LlmSearchResult& r = result.search;
  const std::vector<double>& simulated = result.simulated_s;
  const int n = request.settings.devices;
  auto with_simulation = [&](io::Json j, std::size_t i) {
    if (simulated[i] >= 0) {
      j["simulated_iteration_time_s"] = simulated[i];
      j["simulation_difference"] = simulated[i] / r.top[i].result.iteration_time_s - 1;
    }
    return j;
  };
  io::Json j = with_simulation(priced_json(r.top[0].config, r.top[0].result, n), 0);
  j["model"] = request.model.name;
  j["cluster"] = request.cluster_name;
  j["planner"] = "llm";
  j["cost_model"] = "analytic";
  io::Json top = io::Json::array();
  for (std::size_t i = 0; i < r.top.size(); ++i)
    top.push_back(with_simulation(priced_json(r.top[i].config, r.top[i].result, n), i));
  j["top"] = top;
  // The search's work (configurations priced, seconds) depends on how fast the parallel tasks
  // tighten their shared bound: the answer in words gives it; the document is byte-identical
  // between runs.
  j["search"] = {{"timed_out", r.timed_out}};
  // Plans within the stack's validated time error of the fastest: ties, the leanest first.
  j["ties"] = {{"count", result.ties},
               {"time_band", result.time_band},
               {"leanest_chosen", result.leaner_chosen}};
  // How sure the peaks are: the memory model's mean error on the measured peaks.
  j["peak_band"] = kPeakBand;
  return j;
}

io::Json mixed_priced_json(const Cluster& cluster, const MixedConfig& c, const MixedResult& r) {
  io::Json stages = io::Json::array();
  for (const MixedStage& st : r.stages)
    stages.push_back(
        {{"device_type", cluster.device_types[static_cast<std::size_t>(st.device_type)].name},
         {"tp", st.tp},
         {"dp", st.dp},
         {"first_layer", st.first_layer},
         {"layers", st.layers},
         {"time_per_microbatch_s", st.time_per_microbatch_s},
         {"dp_sync_s", st.sync_s},
         {"optimizer_s", st.optimizer_s},
         {"peak_bytes", st.memory.peak_bytes},
         {"memory_limit_bytes", st.memory_limit_bytes},
         {"device_ids", st.device_ids}});
  MixedConfig priced = c;
  priced.stage_layers = r.stage_layers;  // the split priced, even when implicit
  return {{"iteration_time_s", r.iteration_time_s},
          {"tokens_per_s", r.tokens_per_s},
          {"tflops_per_device", r.tflops_per_device},
          {"mfu", r.mfu},
          {"fits", r.fits},
          {"breakdown",
           {{"pipeline_s", r.pipeline_s},
            {"bubble_s", r.bubble_s},
            {"dp_allreduce_s", r.dp_allreduce_s},
            {"optimizer_s", r.optimizer_s}}},
          {"config", io::mixed_config_to_json(cluster, priced)},
          {"stages", stages}};
}

io::Json mixed_transformer_plan_file(const MixedTransformerPlanRequest& request,
                                     const MixedTransformerPlanResult& result) {
  if (result.best_alone) {  // a transformer plan on that type's devices alone
    const SingleTypePlan& a = result.alone[*result.best_alone];
    std::size_t type = 0;
    while (request.cluster.device_types[type].name != a.device_type) ++type;
    const MixedAnalyticModel mixed(request.model, request.cluster, request.calibrations,
                                   request.devices);
    io::Json answer = priced_json(a.best->config, a.best->result, a.devices);
    answer["model"] = request.model.name;
    answer["cluster"] = fmt::format("{} ({} alone)", request.cluster_name, a.device_type);
    return plan_file_json(
        {request.model.name, llm_plan(*a.best),
         TransformerReplay{request.model, mixed.type_cluster(static_cast<int>(type), a.devices),
                           request.calibrations[type]}},
        answer);
  }
  const MixedCandidate& best = result.search.top.at(0);
  io::Json answer = mixed_priced_json(request.cluster, best.config, best.result);
  answer["model"] = request.model.name;
  answer["cluster"] = request.cluster_name;
  return plan_file_json(
      {request.model.name, mixed_plan(best),
       MixedReplay{request.model, request.cluster, request.calibrations, request.devices}},
      answer);
}

io::Json mixed_transformer_plan_json(const MixedTransformerPlanRequest& request,
                                     const MixedTransformerPlanResult& result) {
  const MixedSearchResult& r = result.search;
  io::Json top = io::Json::array();
  for (const MixedCandidate& c : r.top)
    top.push_back(mixed_priced_json(request.cluster, c.config, c.result));
  io::Json alone = io::Json::array();
  for (const SingleTypePlan& a : result.alone)
    alone.push_back({{"device_type", a.device_type},
                     {"devices", a.devices},
                     {"plan", a.best ? priced_json(a.best->config, a.best->result, a.devices)
                                     : io::Json(nullptr)}});
  const TypeBlindPlan& b = result.blind;
  io::Json blind = {{"device_type", b.device_type}, {"plan", nullptr}};
  if (b.plan) {
    blind["plan"] = priced_json(b.plan->config, b.plan->result, request.devices);
    blind["iteration_time_s"] = b.iteration_time_s;
    blind["fits"] = b.fits;
    blind["priced_as"] = b.priced_as;
  }
  return {{"model", request.model.name},
          {"cluster", request.cluster_name},
          {"devices", request.devices},
          {"planner", "llm-mixed"},
          {"cost_model", "analytic"},
          {"answer", result.best_alone ? "alone" : "mixed"},
          {"iteration_time_s", result.best_iteration_time_s},
          {"mixed", top.empty() ? io::Json(nullptr) : top[0]},
          {"top", top},
          {"alone", alone},
          {"type_blind", blind}};
}

io::Json transformer_plan_file(const TransformerPlanRequest& request,
                               const TransformerPlanResult& result) {
  return plan_file_json({request.model.name, result.plans.at(0),
                         TransformerReplay{request.model, request.cluster, request.calibration}},
                        transformer_plan_json(request, result));
}

io::Json pipeline_plan_json(const PipelinePlanRequest& request, const PipelinePlanResult& result) {
  const PiperSettings& settings = request.settings;
  io::Json j = io::plan_to_json(result.plan, request.model);
  j["memory_per_device_bytes"] = settings.memory_per_device_bytes;
  j["max_devices"] = settings.max_devices;
  j["bandwidth_bytes_per_s"] = settings.bandwidth_bytes_per_s;
  if (result.smallest_memory_per_device_bytes)
    j["smallest_memory_per_device_bytes"] = *result.smallest_memory_per_device_bytes;
  if (!settings.device_groups.empty()) {
    io::Json names = io::Json::array();
    for (const auto& g : settings.device_groups) names.push_back(g.name);
    j["device_groups"] = names;  // stages[].device_type indexes these
    const ProfileFacts& p = request.model.profiled;
    if (p.flops_per_s > 0) {  // the profile's compute, priced on the cluster's devices
      io::Json factors = io::Json::array();
      for (const auto& g : settings.device_groups)
        factors.push_back({{"device_type", g.name}, {"time_factor", g.time_factor}});
      j["compute_scaling"] = {{"profiled_on", p.device},
                              {"profiled_flops_per_s", p.flops_per_s},
                              {"device_types", factors}};
    }
  }
  if (result.mixed)
    j["mixed_baselines"] = {{"blind_planned", result.mixed->blind_planned},
                            {"blind_on_this_cluster", result.mixed->blind_on_cluster},
                            {"fastest_group", result.mixed->fastest_group},
                            {"fastest_group_alone", result.mixed->fastest_alone}};
  if (result.coarsening)
    j["coarsening"] = {{"super_nodes", result.coarsening->super_nodes},
                       {"coarse_objective", result.coarsening->coarse_objective},
                       {"uncoarsened_objective", result.coarsening->uncoarsened_objective},
                       {"refinement_moves", result.coarsening->moves},
                       {"reason", result.coarsening->reason}};
  j["search_objective"] = result.iteration ? "iteration" : "steady-state";
  if (result.iteration)
    j["iteration"] = {
        {"iteration_time_s", result.iteration->iteration_s},
        {"steady_state_plan_iteration_time_s", result.iteration->steady_state_plan_iteration_s},
        {"exact", result.iteration->exact},
        {"stage_prices", result.iteration->stage_prices},
        {"plans_replayed", result.iteration->plans_replayed}};
  if (result.placed_simulated_s && result.rank_order_simulated_s) {
    j["placed_simulated_s"] = *result.placed_simulated_s;
    j["rank_order_simulated_s"] = *result.rank_order_simulated_s;
  }
  if (const auto& n = result.network_choice)
    j["network_choice"] = {{"candidates", n->candidates},
                           {"flat_choice_stages", n->flat_stages},
                           {"flat_choice_placed_simulated_s", n->flat_placed_simulated_s}};
  return j;
}

io::Json pipeline_plan_file(const PipelinePlanRequest& request, const PipelinePlanResult& result) {
  PipelineReplay replay{request.model, request.settings, std::nullopt};
  if (result.plan.as<PipelineDetail>().placement && request.cluster)
    replay.cluster = *request.cluster;  // a placed plan replays on its cluster's links
  return plan_file_json({request.model.name, result.plan, std::move(replay)},
                        pipeline_plan_json(request, result));
}

io::Json dapple_plan_file(const DapplePlanRequest& request, const DapplePlanResult& result) {
  return plan_file_json({request.model.name, result.plan, DappleReplay{}},
                        dapple_plan_json(request, result));
}

io::Json intra_op_plan_file(const IntraOpPlanRequest& request, const IntraOpPlanResult& result) {
  IntraOpReplay replay;  // the writer needs none of it: the layers' costs are in the answer
  replay.flops_per_s = request.settings.flops_per_s;
  replay.devices = request.settings.devices;
  return plan_file_json({request.model.name, result.plan, std::move(replay)},
                        intra_op_plan_json(request, result));
}

io::Json dapple_plan_json(const DapplePlanRequest& request, const DapplePlanResult& result) {
  const DappleSettings& settings = request.settings;
  io::Json j = io::plan_to_json(result.plan, request.model);
  j["global_batch"] = settings.global_batch;
  j["microbatch_size"] = settings.microbatch_size;
  j["profile_batch_size"] = request.model.profile_batch_size;
  j["machines"] = settings.machine_ends;
  j["data_parallel_speedup"] = result.data_parallel_speedup;
  j["states"] = result.states;
  j["states_linearised"] = result.states_linearised;
  return j;
}

io::Json intra_op_plan_json(const IntraOpPlanRequest& request, const IntraOpPlanResult& result) {
  const PaseSettings& s = request.settings;
  io::Json j = io::plan_to_json(result.plan, request.model);
  j["devices"] = s.devices;
  j["batch"] = request.batch;
  j["flops_per_s"] = s.flops_per_s;
  j["bandwidth_bytes_per_s"] = s.bandwidth_bytes_per_s;
  j["min_block"] = s.min_block;
  j["keep_all_flows"] = s.keep_all_flows;
  j["powers_of_two"] = s.powers_of_two;
  j["all_devices"] = s.use_all_devices;
  const MemoryBreakdown& m = result.memory;
  j["peak_memory_bytes"] = m.peak_bytes;
  j["memory"] = {{"weights_bytes", m.weights_bytes},
                 {"gradients_bytes", m.gradients_bytes},
                 {"optimizer_bytes", m.optimizer_bytes},
                 {"activations_bytes", m.activations_bytes},
                 {"bytes_per_element", s.bytes_per_element},
                 {"optimizer_bytes_per_parameter", s.optimizer_bytes_per_parameter}};
  j["elimination"] = {{"induced_width", result.solve.max_dependent},
                      {"largest_table_entries", result.solve.largest_table},
                      {"work", result.solve.work}};
  return j;
}

namespace {

io::Json devices_json(const sim::Result& r) {
  io::Json per_device = io::Json::array();
  for (std::size_t d = 0; d < r.timeline.devices.size(); ++d)
    per_device.push_back({{"name", r.timeline.devices[d]},
                          {"busy_s", r.devices[d].busy_s},
                          {"peak_bytes", r.devices[d].peak_bytes}});
  return per_device;
}

}  // namespace

io::Json knob_table_json() {
  io::Json rows = io::Json::array();
  for (const KnobSpec& s : knob_table()) {
    const char* type = "";
    switch (s.type) {
      case KnobType::kInteger:
        type = "integer";
        break;
      case KnobType::kReal:
        type = "real";
        break;
      case KnobType::kFlag:
        type = "flag";
        break;
      case KnobType::kOnOff:
        type = "on-off";
        break;
      case KnobType::kChoice:
        type = "choice";
        break;
      case KnobType::kText:
        type = "text";
        break;
    }
    const io::Json stacks = stacks_of(s);
    io::Json spellings = io::Json::object();
    for (Engine e : kEngines)
      if (!s.spelled(e).empty()) spellings[std::string(engine_name(e))] = std::string(s.spelled(e));
    io::Json row = {{"keyword", s.keyword},
                    {"flag", s.flag},
                    {"config_key", s.config_key},
                    {"type", type},
                    {"unit", s.unit},
                    {"searched", s.searched},
                    {"default", s.default_text},
                    {"stacks", stacks},
                    {"spellings", spellings},
                    {"help", s.help}};
    if (s.type == KnobType::kInteger || s.type == KnobType::kReal) {
      row["min"] = s.min;
      row["max"] = s.max;
    }
    if (s.type == KnobType::kChoice) row["choices"] = s.choices;
    rows.push_back(std::move(row));
  }
  return {{"format", "paraplan-knobs"}, {"knobs", rows}};
}

io::Json simulation_json(const SimulateResult& s) {
  const sim::Result& r = s.result;
  const char* schedule = schedule_name(s.schedule);
  switch (s.kind) {
    case PlanKind::kPipeline:
      return {{"model", s.model},
              {"schedule", schedule},
              {"iteration_time", s.iteration_time_s},
              {"bound", s.reference_s},
              {"difference", s.difference},
              {"on_network", s.on_network},
              {"bubble_fraction", r.bubble_fraction},
              {"events", r.timeline.events.size()},
              {"devices", devices_json(r)}};
    case PlanKind::kIntraOp:
      return {{"model", s.model},
              {"schedule", schedule},
              {"iteration_time_s", s.iteration_time_s},
              {"analytic_iteration_time_s", s.reference_s},
              {"difference", s.difference},
              {"events", r.timeline.events.size()}};
    case PlanKind::kDapple:
      return {{"schedule", schedule},
              {"iteration_time_s", s.iteration_time_s},
              {"analytic_iteration_time_s", s.reference_s},
              {"difference", s.difference},
              {"bubble_fraction", r.bubble_fraction},
              {"events", r.timeline.events.size()}};
    case PlanKind::kTransformer:
    case PlanKind::kMixedTransformer:
      break;
  }
  double peak = 0;
  for (const auto& d : r.devices) peak = std::max(peak, d.peak_bytes);
  return {{"model", s.model},
          {"schedule", schedule},
          {"iteration_time_s", s.iteration_time_s},
          {"analytic_iteration_time_s", s.reference_s},
          {"difference", s.difference},
          {"bubble_fraction", r.bubble_fraction},
          {"peak_bytes", peak},
          {"analytic_peak_bytes", s.analytic_peak_bytes},
          {"device_memory_bytes", s.device_memory_bytes},
          {"fits", s.fits},
          {"events", r.timeline.events.size()},
          {"devices", devices_json(r)}};
}

io::Json pipeline_frontier_json(const PipelineFrontierRequest& request,
                                const PipelineFrontierPlan& result) {
  const PipelineFrontierResult& f = result.frontier;
  io::Json points = io::Json::array();
  for (const auto& p : f.points) {
    io::Json stages = io::Json::array();
    for (const auto& st : p.plan.stages)
      stages.push_back({{"layers", st.layers.size()},
                        {"data_parallel", st.data_parallel},
                        {"tensor_parallel", st.tensor_parallel},
                        {"memory_bytes", st.memory_bytes}});
    points.push_back({{"objective", p.objectives.time_s},
                      {"peak_memory_bytes", p.objectives.peak_bytes},
                      {"devices_used", p.objectives.devices},
                      {"stages", stages}});
  }
  return {{"model", request.model.name},
          {"cost_model", "piper"},
          {"objectives", {"objective", "peak_memory_bytes", "devices_used"}},
          {"points", points},
          {"search", {{"memory_step", request.options.memory_step}, {"truncated", f.truncated}}}};
}

io::Json intra_op_frontier_json(const IntraOpFrontierRequest& request,
                                const IntraOpFrontierPlan& result) {
  const PaseSettings& s = request.settings;
  io::Json points = io::Json::array();
  for (std::size_t i = 0; i < result.plans.size(); ++i) {
    const IntraOpFrontierPoint& p = result.frontier.points[i];
    const MemoryBreakdown& m = result.memory[i];
    io::Json splits = io::Json::array();
    for (const LayerSplit& ls : result.plans[i].as<IntraOpDetail>().layer_splits)
      splits.push_back({{"layer", request.model.layers[ls.layer].id}, {"split", ls.split}});
    points.push_back({{"step_time_s", result.plans[i].as<IntraOpDetail>().step_time_s},
                      {"objective", p.objective},
                      {"peak_memory_bytes", m.peak_bytes},
                      {"devices_used", p.devices},
                      {"memory",
                       {{"weights_bytes", m.weights_bytes},
                        {"gradients_bytes", m.gradients_bytes},
                        {"optimizer_bytes", m.optimizer_bytes},
                        {"activations_bytes", m.activations_bytes}}},
                      {"layer_splits", splits}});
  }
  return {{"model", request.model.name},
          {"planner", "intra-op"},
          {"cost_model", "pase"},
          {"devices", s.devices},
          {"batch", request.batch},
          {"flops_per_s", s.flops_per_s},
          {"bandwidth_bytes_per_s", s.bandwidth_bytes_per_s},
          {"min_block", s.min_block},
          {"powers_of_two", s.powers_of_two},
          {"keep_all_flows", s.keep_all_flows},
          {"bytes_per_element", s.bytes_per_element},
          {"optimizer_bytes_per_parameter", s.optimizer_bytes_per_parameter},
          {"memory_limit_bytes", request.memory_limit_bytes},
          {"objectives", {"step_time_s", "peak_memory_bytes", "devices_used"}},
          {"points", points},
          {"search",
           {{"exact", request.options.memory_step == 0},
            {"memory_step", request.options.memory_step},
            {"solves", result.frontier.solves},
            {"stored_points", result.frontier.stored_points},
            {"largest_set", result.frontier.largest_set}}}};
}

io::Json transformer_frontier_json(const TransformerFrontierRequest& request,
                                   const std::string& cluster_name,
                                   const LlmFrontierResult& result) {
  io::Json points = io::Json::array();
  for (const auto& c : result.points) {
    io::Json p = priced_json(c.config, c.result, c.config.devices());
    p["objective"] = c.result.iteration_time_s;
    p["peak_memory_bytes"] = c.result.memory.peak_bytes;
    p["devices_used"] = c.config.devices();
    points.push_back(p);
  }
  return {{"model", request.model.name},
          {"cluster", cluster_name},
          {"objectives", {"iteration_time_s", "peak_memory_bytes", "devices_used"}},
          {"points", points}};
}

}  // namespace paraplan::api
