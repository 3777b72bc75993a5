// The plan job: which planner, its defaults, its products.
#include "api/plan_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "api/evaluate.h"
#include "api/inputs.h"
#include "api/launch.h"
#include "api/plan.h"
#include "api/plan_mixed.h"
#include "api/plan_text.h"
#include "api/results_json.h"
#include "api/simulate.h"
#include "ir/units.h"
#include "render/dot_writer.h"
#include "zoo/cluster_presets.h"

namespace paraplan::api {
namespace {

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Every planner's products; `dot` is the intra-op planner's own.
const std::vector<std::string> kProducts = {"output", "report", "trace"};

void refuse_others(const PlanOptions& o, const std::vector<std::string>& takes,
                   const std::string& what) {
  refuse_fields(o.given, takes, what);
}

double bytes_or_zero(const std::string& field, const std::string& text) {
  return text.empty() ? 0 : bytes_value(field, text);
}

void set_timeline(PlanOutcome& out, const Timeline* timeline) {
  if (timeline) out.timeline = *timeline;
}

// Without an input or a model, plan answers the question most users come with: how to train a
// well-known LLM on a realistic cluster.
// The example's own settings, printed beside it: not defaults of the transformer planner.
constexpr const char* kShowcaseModel = "llama3-70b";
constexpr const char* kShowcaseCluster = "dgx-h100";
constexpr int kShowcaseDevices = 64;
constexpr std::int64_t kShowcaseBatch = 256, kShowcaseSeqLen = 8192;

PlanOutcome mixed_transformer(const PlanOptions& o, const TransformerKnobs& knobs,
                              TransformerPlanRequest& r, int devices) {
  const std::pair<bool, const char*> products[] = {{!o.export_to.empty(), "export"},
                                                   {o.resimulate > 0, "resimulate"},
                                                   {o.uniform_stages, "uniform_stages"},
                                                   {o.time_limit_s > 0, "time_limit"}};
  for (const auto& [asked, field] : products)
    if (asked)
      throw FieldError(field,
                       ": not available for a cluster of several device types yet (the "
                       "answer, its document, plan file, trace and report are)");
  const MixedTransformerPlanRequest request =
      mixed_transformer_request(r.model, r.cluster, r.cluster_name, devices, knobs,
                                o.batch > 0 ? o.batch : kDefaultGlobalBatch, o.top, o.model_device);
  const MixedTransformerPlanResult result = plan_mixed_transformer(request);
  PlanOutcome out;
  out.document = mixed_transformer_plan_json(request, result);
  if (o.words) out.words = mixed_transformer_words(request, result);
  if (o.plan_file || o.trace || o.report) {
    out.file = mixed_transformer_plan_file(request, result);
    if (o.trace || o.report) {  // the file replayed as `simulate` replays it
      SimulateRequest replay;
      replay.plan_path = "the plan";
      replay.report = o.report;
      SimulateResult s = simulate_document(out.file, replay);
      out.timeline = std::move(s.result.timeline);
      out.report_html = std::move(s.report_html);
    }
    if (!o.plan_file) out.file = nullptr;
  }
  return out;
}

PlanOutcome infeasible_transformer(const TransformerPlanRequest& r,
                                   const TransformerPlanResult& result) {
  const TransformerInfeasible& what = *result.infeasible;
  const Cluster& cluster = r.cluster;
  const std::string device = cluster.device_types[0].name;
  const double memory = cluster.device_types[0].memory_bytes;
  const int devices = r.settings.devices;
  PlanOutcome out;
  io::Json& j = out.document;
  j = {{"feasible", false},
       {"model", r.model.name},
       {"cluster", r.cluster_name},
       {"planner", "llm"},
       {"cost_model", "analytic"},
       {"devices", devices},
       {"memory_per_device_bytes", memory},
       {"configurations_priced", result.search.evaluated},
       {"search", {{"timed_out", result.search.timed_out}}}};
  const double limit = cluster.device_types[0].memory_limit_bytes();
  std::string message =
      fmt::format("none of the {} configurations of {} on {} × {} fits in {} per device{}{}",
                  result.search.evaluated, r.model.name, devices, device, format_bytes(limit),
                  limit < memory ? fmt::format(" ({} less {} of headroom)", format_bytes(memory),
                                               format_bytes(memory - limit))
                                 : "",
                  result.search.timed_out ? " (the search stopped at its time limit)" : "");
  if (what.leanest) {
    const double need = what.leanest->result.memory.peak_bytes;
    j["least_memory_per_device_bytes"] = need;
    j["leanest"] = priced_json(what.leanest->config, what.leanest->result, devices);
    message += fmt::format("; the leanest needs {} per device ({})", format_bytes(need),
                           plan_in_words(what.leanest->config));
  }
  if (what.at_fewest) {
    j["fewest_devices"] = what.fewest_devices;
    j["fewest_devices_plan"] =
        priced_json(what.at_fewest->config, what.at_fewest->result, what.fewest_devices);
    message += fmt::format(
        "; the fewest {} on which a plan fits: {} ({}, {:.3f} s per iteration, {} per device)",
        device, what.fewest_devices, plan_in_words(what.at_fewest->config),
        what.at_fewest->result.iteration_time_s,
        format_bytes(what.at_fewest->result.memory.peak_bytes));
  } else {
    j["fewest_devices"] = nullptr;
  }
  out.failure = Error(ErrorKind::kInfeasible, "", message);
  return out;
}

// "15T", "300B", "2.5e12" tokens: SI suffixes K, M, B or G, T (10^3 ... 10^12).
double token_count(const std::string& text) {
  const std::string field = "train_tokens";
  if (text.empty()) throw FieldError(field, ": expected a token count such as 15T or 300B");
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'B':
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
  }
  if (scale != 1) number.pop_back();
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(v > 0) || !std::isfinite(v))
    throw FieldError(field, " " + text +
                                ": expected a positive token count such as 15T (10^12), "
                                "300B (10^9) or 2.5e12");
  return v * scale;
}

PlanOutcome transformer(const PlanOptions& o, bool showcase);

// The fewest devices of the preset's kind whose best plan (under the same knobs) trains the
// tokens within the deadline: multiplicative steps from one node, by the throughput each count's
// plan reaches, then bisection over whole nodes between the last count short of it and the
// first that meets it (throughput grows with devices until the batch stops it; a count whose
// batch no shape divides fits nothing and counts as short).
PlanOutcome sized_transformer(const PlanOptions& asked) {
  if (asked.days <= 0) throw FieldError("days", ": --train-tokens needs the deadline, --days D");
  const double tokens = token_count(asked.train_tokens);
  const double need = tokens / (asked.days * 86400.0);  // tokens per second
  const std::string preset = asked.cluster.empty() ? std::string(kDefaultCluster) : asked.cluster;
  const auto probe_cluster = zoo::cluster_preset(preset, 1);
  if (!probe_cluster)
    throw FieldError("cluster", " " + preset +
                                    ": --train-tokens grows a cluster preset (dgx-a100, "
                                    "dgx-h100, h200, dgx-b200, gb200-nvl72), not a file");
  const auto wide = zoo::cluster_preset(preset, 1024);
  const int per_node = wide ? wide->machine_sizes[0] : probe_cluster->machine_sizes[0];
  struct Tried {
    int devices = 0;
    double tokens_per_s = 0;
    PlanOutcome outcome;
  };
  int searches = 0;
  auto try_devices = [&](int devices) -> Tried {
    PlanOptions o = asked;
    o.train_tokens.clear();
    o.days = 0;
    o.gpu_hour_price = 0;
    o.cluster = preset;
    o.devices = devices;
    o.progress = nullptr;
    o.given.push_back("devices");
    o.given.push_back("cluster");
    ++searches;
    Tried t{devices, 0, {}};
    try {
      t.outcome = transformer(o, false);
    } catch (const Error& e) {
      // No shape of this count divides the batch: no plan here. The first count (one node)
      // reports the knobs' own errors as they are.
      if (e.kind() != ErrorKind::kUsage || searches == 1) throw;
      t.outcome.failure = e;
    }
    if (!t.outcome.failure) t.tokens_per_s = t.outcome.document["tokens_per_s"].get<double>();
    return t;
  };
  // Counts of whole nodes with small odd factors (1, 1.25, 1.5, 1.75 times a power of two):
  // what divides a batch among replicas, and what clusters are bought in.
  std::vector<int> counts;
  for (int a = 0; a <= 20; ++a)
    for (int f : {4, 5, 6, 7}) {
      const long long nodes = (static_cast<long long>(f) << a) / 4;
      if ((static_cast<long long>(f) << a) % 4 == 0 && nodes * per_node <= (1 << 20))
        counts.push_back(static_cast<int>(nodes * per_node));
    }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  std::vector<std::optional<Tried>> tried(counts.size());
  auto at = [&](std::size_t i) -> const Tried& {
    if (!tried[i]) tried[i] = try_devices(counts[i]);
    return *tried[i];
  };
  // Jump by the throughput per device the last plan reached, until a count meets the need.
  std::size_t i = 0, found = counts.size();
  std::ptrdiff_t low = -1;
  double best_rate = 0;
  int best_at = 0;
  for (int step = 0; step < 40 && i < counts.size(); ++step) {
    const Tried& t = at(i);
    if (t.tokens_per_s >= need) {
      found = i;
      break;
    }
    low = static_cast<std::ptrdiff_t>(i);
    std::size_t next = i + 2;  // no plan here: about twice the devices
    if (t.tokens_per_s > 0) {
      if (best_rate > 0 && t.tokens_per_s < 1.01 * best_rate && t.devices > best_at) break;
      if (t.tokens_per_s > best_rate) best_rate = t.tokens_per_s, best_at = t.devices;
      const double wanted = 1.02 * need / (t.tokens_per_s / t.devices);
      next = static_cast<std::size_t>(std::lower_bound(counts.begin(), counts.end(), wanted) -
                                      counts.begin());
      next = std::max(next, i + 1);
    }
    i = next;
  }
  if (found == counts.size()) {
    throw Error(ErrorKind::kInfeasible, "",
                fmt::format("no count of {} devices trains {} in {:g} days with a global batch "
                            "of {} sequences: the most found is {} tokens/s on {} devices, {} "
                            "needed; give a larger --batch (more data-parallel replicas) or more "
                            "days",
                            preset, asked.train_tokens, asked.days,
                            asked.batch > 0 ? asked.batch : kDefaultGlobalBatch, grouped(best_rate),
                            best_at, grouped(need)));
  }
  // The fewest between the last count short of it and the first that meets it.
  std::size_t high = found;
  while (static_cast<std::ptrdiff_t>(high) - low > 1) {
    const std::size_t mid =
        static_cast<std::size_t>(low + (static_cast<std::ptrdiff_t>(high) - low) / 2);
    if (at(mid).tokens_per_s >= need)
      high = mid;
    else
      low = static_cast<std::ptrdiff_t>(mid);
  }
  std::optional<Tried> meets = std::move(tried[high]);
  const int short_count = low >= 0 ? counts[static_cast<std::size_t>(low)] : 0;
  const int devices = meets->devices;
  const double days = tokens / meets->tokens_per_s / 86400.0;
  const double gpu_hours = devices * days * 24.0;
  PlanOutcome out = std::move(meets->outcome);
  io::Json question = {
      {"train_tokens", tokens}, {"days", asked.days}, {"tokens_per_s_needed", need}};
  if (asked.gpu_hour_price > 0) question["gpu_hour_price"] = asked.gpu_hour_price;
  io::Json answer = {{"devices", devices},
                     {"nodes", devices / per_node},
                     {"days", days},
                     {"device_hours", gpu_hours},
                     {"searches", searches}};
  if (asked.gpu_hour_price > 0) answer["cost"] = gpu_hours * asked.gpu_hour_price;
  out.document["sizing"] = {{"question", question}, {"answer", answer}};
  if (asked.words) {
    const std::string device = probe_cluster->device_types[0].name;
    std::string head = fmt::format(
        "to train {} on {} tokens in {:g} days ({} tokens/s): {} × {} ({} nodes of {}), finishing "
        "in {:.1f} days, {} device-hours",
        asked.model, asked.train_tokens, asked.days, grouped(need), grouped(devices), device,
        devices / per_node, per_node, days, grouped(gpu_hours));
    if (asked.gpu_hour_price > 0)
      head += fmt::format(", costing {} at {:g} per device-hour",
                          grouped(gpu_hours * asked.gpu_hour_price), asked.gpu_hour_price);
    head += fmt::format(
        " (the fewest of the node counts tried, {} plan searches; {} fall short)"
        "\n\n",
        searches, grouped(short_count));
    out.words = head + out.words;
  }
  return out;
}

PlanOutcome transformer(const PlanOptions& o, bool showcase) {
  if (!o.input.empty()) throw FieldError("model", ": give either it or an input, not both");
  refuse_others(o, kTransformerPlanFields + kKnobFields + kProducts,
                showcase ? std::string("the transformer planner (without an input or a model it "
                                       "plans ") +
                               kShowcaseModel +
                               "; give an input, or choose the pipeline planner for the built-in "
                               "layer model)"
                         : "the transformer planner (" + o.model + ")");
  TransformerPlanRequest r;
  r.model = load_transformer(showcase ? kShowcaseModel : o.model);
  r.cluster_name = !o.cluster.empty() ? o.cluster
                   : showcase         ? kShowcaseCluster
                                      : std::string(kDefaultCluster);
  const int devices = o.devices > 0 ? o.devices : showcase ? kShowcaseDevices : kDefaultDevices;
  r.cluster = load_cluster(r.cluster_name, devices);
  TransformerKnobs knobs = o.knobs;
  knobs.memory = o.memory;  // plan's own memory: the device memory of the cluster
  if (showcase && !knobs.seq_len) knobs.seq_len = kShowcaseSeqLen;
  if (knobs.memory_headroom.empty()) knobs.memory_headroom = std::string(kDefaultPlanHeadroom);
  apply_memory_knobs(knobs, r.cluster);
  if (device_types_used(r.cluster, devices) > 1) {
    return mixed_transformer(o, knobs, r, devices);
  }
  if (!o.model_device.empty())
    throw FieldError("model_device",
                     ": the transformer planner takes it on a cluster of several device types "
                     "only (" +
                         r.cluster_name + " has one)");
  r.cluster = one_device_type(r.cluster, devices, "the transformer planner");
  const std::int64_t batch = o.batch > 0 ? o.batch
                             : showcase  ? kShowcaseBatch
                                         : kDefaultGlobalBatch;
  // torchtitan runs PyTorch's FSDP: its plans are priced on that stack unless told otherwise.
  // Megatron-DeepSpeed's on the deepspeed stack.
  if (!o.export_to.empty() && knobs.stack.empty())
    knobs.stack = stack_text(engine_rules(export_engine(o.export_to)).stack);
  r.settings = search_settings(knobs, devices, batch, o.uniform_stages);
  if (o.export_to == engines::kTorchtitanRecipe) keep_to_torchtitan_recipe(r.settings);
  r.settings.top_k = o.top;
  r.settings.time_limit_s = o.time_limit_s < 0 ? kDefaultPlanTimeLimitS : o.time_limit_s;
  r.settings.progress = o.progress;
  r.calibration = load_calibration(knobs.calibration, r.cluster);
  r.resimulate = o.resimulate;
  if (!o.export_to.empty()) r.engine = export_engine(o.export_to);
  r.products = {o.trace, o.report};
  const std::string preset = r.cluster_name;
  const TransformerPlanResult result = plan_transformer(r, [&](int more) -> std::optional<Cluster> {
    auto grown = zoo::cluster_preset(preset, more);
    if (!grown) return std::nullopt;
    apply_memory_knobs(knobs, *grown);  // the same memory and headroom as asked
    return one_device_type(*grown, more, "the transformer planner");
  });
  PlanOutcome out;
  if (result.infeasible) return infeasible_transformer(r, result);
  out.document = transformer_plan_json(r, result);
  // The showcase's settings are its own, said in its words; a plan's defaults are said here.
  std::vector<DefaultTaken> candidates;
  if (!showcase) {
    candidates.push_back({"cluster", r.cluster_name});
    candidates.push_back({"devices", std::to_string(devices)});
    candidates.push_back({"batch", std::to_string(batch)});
    candidates.push_back({"seq_len", std::to_string(r.settings.seq_len)});
  }
  candidates.push_back({"memory_headroom", std::string(kDefaultPlanHeadroom)});
  const std::vector<DefaultTaken> defaults = defaults_taken(o.given, candidates);
  out.document["defaults"] = defaults_json(defaults);
  if (!o.export_to.empty()) {
    out.exported = export_plan(o.export_to, r.model, result.search.top[0].config,
                               devices_per_node(r.cluster), r.cluster.device_types[0].name);
    out.document["export"] = out.exported;
  }
  if (o.plan_file) out.file = transformer_plan_file(r, result);
  if (o.words) out.words = transformer_words(r, result, showcase) + defaults_words(defaults);
  set_timeline(out, result.simulation ? &result.simulation->result.timeline : nullptr);
  out.report_html = result.report_html;
  return out;
}

PlanOutcome piper(const PlanOptions& o, const Workload& w) {
  PipelinePlanRequest r;
  r.settings = piper_settings(w, o.devices, bytes_or_zero("memory", o.memory),
                              o.bandwidth.empty() ? 0 : bandwidth_value("bandwidth", o.bandwidth),
                              o.microbatches, o.model_device);
  const std::string& profiled_on = w.model.profiled.device;
  r.scaled_by_peaks =
      !o.model_device.empty() || (!profiled_on.empty() && profiled_on.rfind("cpu", 0) != 0);
  if (o.knobs.dp > 0) {  // every stage's data-parallel width
    const PiperSettings& s = r.settings;
    if (o.knobs.dp > s.max_devices)
      throw FieldError("dp",
                       fmt::format(" {}: more than the {} devices", o.knobs.dp, s.max_devices));
    if (s.microbatches % o.knobs.dp)
      throw FieldError("dp", fmt::format(" {}: a stage's replicas share the {} micro-batches, so "
                                         "its width must divide them",
                                         o.knobs.dp, s.microbatches));
    r.settings.data_parallel = o.knobs.dp;
  }
  r.model = w.model;
  r.products = {o.trace, o.report};
  r.progress = o.progress;
  r.cluster = w.cluster;
  r.cluster_name = o.cluster.empty() ? w.cluster.name : o.cluster;
  if (o.placement != "search" && o.placement != "rank-order")
    throw FieldError("placement",
                     " must be \"search\" or \"rank-order\" (got \"" + o.placement + "\")");
  r.rank_order = o.placement == "rank-order";
  if (o.objective != "iteration" && o.objective != "steady-state")
    throw FieldError("objective",
                     " must be \"iteration\" or \"steady-state\" (got \"" + o.objective + "\")");
  r.steady_state = o.objective == "steady-state";
  if (o.knobs.pp > 0) {
    if (r.steady_state)
      throw FieldError("pp",
                       ": a stage count is searched under the iteration objective only (Piper's "
                       "steady-state search chooses its stages); drop --objective steady-state");
    if (o.knobs.pp > w.model.size())
      throw FieldError("pp",
                       fmt::format(" {}: the model has {} layers", o.knobs.pp, w.model.size()));
    r.stages = o.knobs.pp;
  }
  if (!o.stage_dp.empty()) {  // each stage's data-parallel width, first stage first
    if (r.steady_state)
      throw FieldError("stage_dp",
                       ": widths per stage are searched under the iteration objective only; drop "
                       "--objective steady-state");
    if (o.knobs.dp > 0) throw FieldError("stage_dp", ": give it or dp (every stage's), not both");
    std::vector<int> widths;
    try {
      widths = parse_stage_layers(o.stage_dp);
    } catch (const FieldError&) {
      throw FieldError("stage_dp", ": expected widths separated by commas, e.g. 2,1,1 (got \"" +
                                       o.stage_dp + "\")");
    }
    for (int d : widths)
      if (d < 1 || r.settings.microbatches % d)
        throw FieldError("stage_dp", fmt::format(" {}: each width must divide the {} micro-batches",
                                                 o.stage_dp, r.settings.microbatches));
    if (o.knobs.pp > 0 && o.knobs.pp != static_cast<int>(widths.size()))
      throw FieldError("stage_dp", fmt::format(" {}: {} widths for pp {}", o.stage_dp,
                                               widths.size(), o.knobs.pp));
    if (static_cast<int>(widths.size()) > w.model.size())
      throw FieldError("stage_dp",
                       fmt::format(" {}: the model has {} layers", o.stage_dp, w.model.size()));
    r.stages = static_cast<int>(widths.size());
    r.stage_widths = widths;
  }
  r.coarsen = o.coarsen;
  r.time_limit_s = o.time_limit_s < 0 ? kDefaultPlanTimeLimitS : o.time_limit_s;
  const PipelinePlanResult result = plan_pipeline(r);
  PlanOutcome out;
  // One document: the answer is the plan file (a feasible plan's with what replays it).
  out.document = out.file = pipeline_plan_file(r, result);
  if (!result.plan.feasible) {
    out.failure = no_pipeline_plan(r, result, o.input.empty() ? "default workload" : o.input);
    return out;
  }
  if (o.words) out.words = pipeline_words(r, result);
  set_timeline(out, result.simulation ? &result.simulation->result.timeline : nullptr);
  out.report_html = result.report_html;
  return out;
}

PlanOutcome dapple(const PlanOptions& o, const Workload& w) {
  if (w.format == "piper" || w.format == "builtin")
    throw FieldError("cost_model",
                     " dapple needs a DAPPLE/PipeDream profile (or a model converted from one) "
                     "as input");
  refuse_others(o, kDapplePlanFields + kProducts, "the dapple cost model");
  const std::string machines = o.machines.empty() ? "2x8" : o.machines;
  const DapplePlanRequest r{
      w.model,
      dapple_settings(w, machines, static_cast<int>(o.batch), o.microbatch_size),
      machines,
      {o.trace, o.report}};
  const DapplePlanResult result = plan_dapple(r, o.input);
  PlanOutcome out;
  out.document = dapple_plan_json(r, result);
  if (o.plan_file) out.file = dapple_plan_file(r, result);
  if (o.words) out.words = dapple_words(r, result);
  set_timeline(out, result.simulation ? &result.simulation->timeline : nullptr);
  out.report_html = result.report_html;
  return out;
}

PlanOutcome pipeline(const PlanOptions& o) {
  if (o.cost_model != "auto" && o.cost_model != "piper" && o.cost_model != "dapple")
    throw FieldError("cost_model", " must be piper or dapple (got \"" + o.cost_model + "\")");
  // The cost model follows the input (a profile: dapple) unless given; the fields are checked
  // against both before the input is read, so a wrong field is named even when the input is bad.
  refuse_others(o, kPiperPlanFields + kDapplePlanFields + kProducts, "the pipeline planner");
  const Workload w =
      load_workload({o.input, o.format, o.cluster, o.profile_batch, o.devices > 0 ? o.devices : 8});
  std::string cost_model = o.cost_model;
  if (cost_model == "auto") cost_model = w.format == "dapple" ? "dapple" : "piper";
  if (cost_model == "dapple") return dapple(o, w);
  refuse_others(o, kPiperPlanFields + kProducts, "the piper cost model");
  return piper(o, w);
}

PlanOutcome intra_op(const PlanOptions& o) {
  if (o.cost_model != "auto" && o.cost_model != "pase")
    throw FieldError("cost_model",
                     ": the intra-op planner prices with pase (got \"" + o.cost_model + "\")");
  refuse_others(o, kIntraOpPlanFields + kProducts + std::vector<std::string>{"dot"},
                "the intra-op planner (operator graphs)");
  OperatorGraph g = requested_operator_graph(o.model, o.input, o.format, static_cast<int>(o.batch),
                                             "the intra-op planner");
  IntraOpPlanRequest r;
  PaseSettings& s = r.settings;
  s = pase_settings(o.devices, o.flops, o.bandwidth, o.min_block, g);
  s.keep_all_flows = o.keep_all_flows;
  s.powers_of_two = o.powers_of_two;
  s.use_all_devices = o.all_devices;
  r.model = std::move(g.model);
  r.batch = g.batch;
  r.products = {o.trace, o.report};
  r.progress = o.progress;
  const IntraOpPlanResult result = plan_intra_op(r);
  PlanOutcome out;
  out.document = intra_op_plan_json(r, result);
  if (o.plan_file) out.file = intra_op_plan_file(r, result);
  if (o.words) out.words = intra_op_words(r, result);
  if (o.dot) out.dot = render::model_to_dot(r.model, &result.plan);
  set_timeline(out, result.simulation ? &result.simulation->timeline : nullptr);
  out.report_html = result.report_html;
  return out;
}

}  // namespace

void refuse_fields(const std::vector<std::string>& given, const std::vector<std::string>& takes,
                   const std::string& what) {
  std::vector<std::string> refused;
  for (const auto& g : given)
    if (std::find(takes.begin(), takes.end(), g) == takes.end()) refused.push_back(g);
  if (refused.empty()) return;
  std::vector<std::string> listed;  // what it takes, once each, in order
  for (const auto& t : takes)
    if (std::find(listed.begin(), listed.end(), t) == listed.end()) listed.push_back(t);
  throw NotApplicable(refused, what, listed);
}

const std::vector<std::string> kTransformerPlanFields = {
    "model",          "planner",    "cluster",      "devices",    "batch",
    "uniform_stages", "resimulate", "top",          "time_limit", "export",
    "model_device",   "memory",     "train_tokens", "days",       "gpu_hour_price"};
const std::vector<std::string> kPiperPlanFields = {
    "input",        "format",    "cost_model",   "planner",       "cluster",   "devices",
    "memory",       "bandwidth", "microbatches", "profile_batch", "placement", "coarsen",
    "model_device", "dp",        "pp",           "objective",     "stage_dp",  "time_limit"};
const std::vector<std::string> kDapplePlanFields = {"input",           "format",       "cost_model",
                                                    "planner",         "machines",     "batch",
                                                    "microbatch_size", "profile_batch"};
const std::vector<std::string> kIntraOpPlanFields = {
    "input", "format",    "cost_model", "planner",        "model",         "devices",    "batch",
    "flops", "bandwidth", "min_block",  "keep_all_flows", "powers_of_two", "all_devices"};
// The knobs' fields: every row of the knob table the request's knobs hold.
const std::vector<std::string> kKnobFields = [] {
  std::vector<std::string> fields;
  TransformerKnobs k;
  for (const KnobSpec& s : knob_table())
    if (!std::holds_alternative<std::monostate>(knob_slot(k, s.knob)))
      fields.emplace_back(s.keyword);
  return fields;
}();

PlanOutcome plan(const PlanOptions& given) {
  // A layer model's file given as the model (Python's first argument) is the input.
  if (PlanOptions as_input = given; model_file_as_input(as_input)) return plan(as_input);
  const PlanOptions& o = given;
  if (!o.from_format.empty()) {
    std::vector<std::string> fields;  // the CLI's "from" is Python's from_format and from_file
    for (const std::string& field : o.given)
      if (field != "from_file") fields.push_back(field == "from_format" ? "from" : field);
    LaunchOptions launch{o.from_format,
                         o.from_file,
                         o.from_text,
                         o.model,
                         o.cluster.empty() ? std::string(kDefaultCluster) : o.cluster,
                         o.devices,
                         o.knobs,
                         o.explain,
                         o.words,
                         fields,
                         o.export_to,
                         o.batch};
    const JobOutcome job = launch_job(launch);
    PlanOutcome out;
    out.document = job.document;
    out.words = job.words;
    out.exported = job.exported;
    return out;
  }
  if (o.explain) throw FieldError("explain", ": it explains a launch configuration (--from)");
  check_model_name(o.model);
  const bool transformer_planner = o.planner == "auto" || o.planner == "llm";
  if (o.input.empty() && o.model.empty() && transformer_planner) return transformer(o, true);
  if (!o.model.empty() && is_transformer_model(o.model) && transformer_planner)
    return o.train_tokens.empty() ? transformer(o, false) : sized_transformer(o);
  if (!o.train_tokens.empty())
    throw FieldError("train_tokens", ": sizes a transformer (--model NAME or config.json)");
  if (o.planner == "llm")
    throw FieldError("planner", " llm needs a transformer model (built-in or config.json)");
  std::string planner = o.planner;
  if (planner == "auto")
    planner = !o.model.empty() || o.format == "onnx" || ends_with(o.input, ".onnx") ? "intra-op"
                                                                                    : "pipeline";
  if (planner == "intra-op") return intra_op(o);
  if (planner != "pipeline")
    throw FieldError("planner", " must be pipeline, intra-op or llm (got \"" + o.planner + "\")");
  return pipeline(o);
}

}  // namespace paraplan::api
