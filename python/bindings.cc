// The Python module `paraplan._paraplan`: the library API (src/api) behind four calls that take
// the keywords of the matching CLI command and return the same JSON document `--json` prints.
// Keywords are checked here, once, with the API's own parsers; errors become paraplan.Error
// subclasses carrying the CLI's message with the keyword in place of the flag.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <set>
#include <string>
#include <vector>

#include "api/evaluate.h"
#include "api/frontier.h"
#include "api/inputs.h"
#include "api/knobs.h"
#include "api/plan.h"
#include "api/plan_mixed.h"
#include "api/results_json.h"
#include "api/simulate.h"
#include "io/json_fields.h"
#include "ir/error.h"
#include "ir/training_rules.h"

namespace py = pybind11;

namespace paraplan::python {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The keywords of one call: refuses those the call does not take, reads each as its type.
class Keywords {
 public:
  Keywords(const py::dict& given, const std::vector<std::string>& allowed, const std::string& what)
      : given_(given) {
    for (const auto& [key, value] : given) {
      const std::string name = py::str(key);
      if (value.is_none()) continue;
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
        throw FieldError(name, " does not apply to " + what + ", which takes " + joined(allowed));
    }
  }
  bool has(const char* key) const { return given_.contains(key) && !given_[key].is_none(); }
  bool is_text(const char* key) const { return has(key) && py::isinstance<py::str>(given_[key]); }
  std::string text(const char* key, const std::string& fallback = "") const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!py::isinstance<py::str>(v)) type_error(key, "a string");
    return v.cast<std::string>();
  }
  long long integer(const char* key, long long fallback, long long lo, long long hi) const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v)) type_error(key, "an integer");
    const long long x = v.cast<long long>();
    if (x < lo || x > hi)
      throw FieldError(key, " " + std::to_string(x) + ": expected " + std::to_string(lo) + " to " +
                                std::to_string(hi));
    return x;
  }
  double number(const char* key, double fallback, double lo, double hi) const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) ||
        py::isinstance<py::bool_>(v))
      type_error(key, "a number");
    const double x = v.cast<double>();
    if (!(x >= lo && x <= hi))
      throw FieldError(key, " " + std::to_string(x) + ": expected " + std::to_string(lo) + " to " +
                                std::to_string(hi));
    return x;
  }
  bool flag(const char* key, bool fallback = false) const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!py::isinstance<py::bool_>(v)) type_error(key, "True or False");
    return v.cast<bool>();
  }
  /// A size: a number of bytes, or a string with its unit ("8GiB").
  double bytes(const char* key) const {
    if (!has(key)) return 0;
    const py::handle v = given_[key];
    if (py::isinstance<py::str>(v)) return api::bytes_value(key, v.cast<std::string>());
    return number(key, 0, 1, 1e30);
  }
  /// A rate: bytes/s, or a string with its unit ("25GB/s").
  double rate(const char* key, bool flops) const {
    if (!has(key)) return 0;
    const py::handle v = given_[key];
    if (py::isinstance<py::str>(v))
      return flops ? api::flops_value(key, v.cast<std::string>())
                   : api::bandwidth_value(key, v.cast<std::string>());
    return number(key, 0, 1e-30, 1e30);
  }

 private:
  [[noreturn]] static void type_error(const char* key, const char* expected) {
    throw FieldError(key, std::string(": expected ") + expected);
  }
  const py::dict& given_;
};

const std::vector<std::string> kKnobs = {"seq_len",
                                         "micro_batch",
                                         "tp",
                                         "cp",
                                         "pp",
                                         "dp",
                                         "ep",
                                         "vpp",
                                         "recompute",
                                         "sequence_parallel",
                                         "zero",
                                         "overlap_grad_reduce",
                                         "attention",
                                         "moe_capacity_factor",
                                         "calibration",
                                         "stack",
                                         "tp_comm_overlap",
                                         "overlap_p2p_comm",
                                         "overlap_param_gather",
                                         "grad_reduce_dtype",
                                         "loss_dtype",
                                         "memory",
                                         "memory_headroom",
                                         "precision"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

api::TransformerKnobs knobs(const Keywords& k) {
  api::TransformerKnobs t;
  t.seq_len = k.integer("seq_len", 0, 1, 1 << 24);
  t.micro_batch = k.integer("micro_batch", 0, 1, 1 << 20);
  t.tp = static_cast<int>(k.integer("tp", 0, 1, 1 << 16));
  t.cp = static_cast<int>(k.integer("cp", 0, 1, 1 << 16));
  t.pp = static_cast<int>(k.integer("pp", 0, 1, 1 << 16));
  t.dp = static_cast<int>(k.integer("dp", 0, 1, 1 << 20));
  t.ep = static_cast<int>(k.integer("ep", 0, 1, 1 << 16));
  t.vpp = static_cast<int>(k.integer("vpp", 0, 1, 1 << 16));
  t.sequence_parallel = k.flag("sequence_parallel");
  t.zero = static_cast<int>(k.integer("zero", -1, 0, 3));
  if (k.has("overlap_grad_reduce")) {
    t.overlap_on = k.flag("overlap_grad_reduce");
    t.overlap_off = !t.overlap_on;
  }
  t.attention = k.text("attention");
  api::attention(t.attention);  // refuse a wrong kernel before any work
  t.moe_capacity_factor = k.number("moe_capacity_factor", 0, 1, 1024);
  t.calibration = k.text("calibration");
  t.stack = k.text("stack");
  api::stack(t.stack);  // refuse a wrong stack before any work
  for (auto [key, field] : {std::pair{"tp_comm_overlap", &t.tp_comm_overlap},
                            std::pair{"overlap_p2p_comm", &t.overlap_p2p_comm},
                            std::pair{"overlap_param_gather", &t.overlap_param_gather}})
    if (k.has(key)) *field = k.flag(key) ? 1 : 0;
  t.grad_reduce_dtype = k.text("grad_reduce_dtype");
  t.precision = k.text("precision");
  t.loss_dtype = k.text("loss_dtype");
  if (k.has("memory")) t.memory = std::to_string(static_cast<long long>(k.bytes("memory")));
  if (k.has("memory_headroom"))  // "5%", "2GiB" or bytes
    t.memory_headroom = k.is_text("memory_headroom")
                            ? k.text("memory_headroom")
                            : std::to_string(static_cast<long long>(k.bytes("memory_headroom")));
  return t;
}

std::string recompute_keyword(const py::dict& kw) {
  if (!kw.contains("recompute") || kw["recompute"].is_none()) return "";
  const py::handle v = kw["recompute"];
  if (py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v))
    return std::to_string(v.cast<long long>());
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  throw FieldError("recompute", ": expected none, selective, full or a number of layers");
}

std::string transformer_plan(const py::dict& kw) {
  const Keywords k(kw,
                   with({"model", "cluster", "devices", "batch", "uniform_stages", "top",
                         "resimulate", "time_limit", "export", "planner", "model_device"},
                        kKnobs),
                   "the transformer planner");
  api::TransformerPlanRequest request;
  request.model = api::load_transformer(k.text("model"));
  request.cluster_name = k.text("cluster", "dgx-a100");
  const int devices = static_cast<int>(k.integer("devices", 8, 1, 1000000));
  request.cluster = api::load_cluster(request.cluster_name, devices);
  api::TransformerKnobs t = knobs(k);
  t.recompute = recompute_keyword(kw);
  api::apply_memory_knobs(t, request.cluster);
  if (api::device_types_used(request.cluster, devices) > 1) {  // the mixed planner
    for (const char* other : {"uniform_stages", "resimulate", "time_limit", "export"})
      if (k.has(other))
        throw FieldError(other, ": not available for a cluster of several device types yet");
    const api::MixedTransformerPlanRequest mixed = api::mixed_transformer_request(
        request.model, request.cluster, request.cluster_name, devices, t,
        k.integer("batch", 512, 1, 1000000000), static_cast<int>(k.integer("top", 5, 1, 1000)),
        k.text("model_device"));
    return api::mixed_transformer_plan_json(mixed, api::plan_mixed_transformer(mixed)).dump();
  }
  if (k.has("model_device"))
    throw FieldError("model_device",
                     ": the transformer planner takes it on a cluster of several "
                     "device types only");
  request.cluster = api::one_device_type(request.cluster, devices, "the transformer planner");
  request.settings = api::search_settings(t, devices, k.integer("batch", 512, 1, 1000000000),
                                          k.flag("uniform_stages"));
  request.settings.top_k = static_cast<int>(k.integer("top", 5, 1, 1000));
  request.settings.time_limit_s = k.number("time_limit", 0, 0, 1e6);
  request.calibration = api::load_calibration(t.calibration, request.cluster);
  request.resimulate = static_cast<int>(k.integer("resimulate", 0, 0, 1000));
  const std::string engine = k.text("export");
  request.megatron_only = engine == "megatron";
  const api::TransformerPlanResult result = api::plan_transformer(request);
  io::Json j = api::transformer_plan_json(request, result);
  if (!engine.empty())
    j["export"] = api::export_plan(engine, request.model, result.search.top[0].config);
  return j.dump();
}

std::string pipeline_plan(const py::dict& kw) {
  const Keywords k(kw,
                   {"input", "format", "cluster", "devices", "memory", "bandwidth", "microbatches",
                    "cost_model", "planner", "machines", "batch", "microbatch_size",
                    "profile_batch", "placement", "coarsen", "model_device"},
                   "the pipeline planner (input=)");
  const int devices = static_cast<int>(k.integer("devices", 0, 1, 1000000));
  const api::Workload w = api::load_workload(
      {k.text("input"), k.text("format", "auto"), k.text("cluster"),
       static_cast<int>(k.integer("profile_batch", 0, 1, 1000000000)), devices > 0 ? devices : 8});
  std::string cost_model = k.text("cost_model", "auto");
  if (cost_model == "auto") cost_model = w.format == "dapple" ? "dapple" : "piper";
  if (cost_model == "piper") {
    api::PipelinePlanRequest request;
    request.settings = api::piper_settings(
        w, devices, k.bytes("memory"), k.rate("bandwidth", false),
        static_cast<int>(k.integer("microbatches", 0, 1, 1 << 30)), k.text("model_device"));
    request.model = w.model;
    // Placed on the cluster's network, as `paraplan plan` does.
    request.cluster = w.cluster;
    request.cluster_name = k.text("cluster").empty() ? w.cluster.name : k.text("cluster");
    const std::string placement = k.text("placement", "search");
    if (placement != "search" && placement != "rank-order")
      throw FieldError("placement",
                       " must be \"search\" or \"rank-order\" (got \"" + placement + "\")");
    request.rank_order = placement == "rank-order";
    request.coarsen = static_cast<int>(k.integer("coarsen", 0, 2, 100000));
    const api::PipelinePlanResult result = api::plan_pipeline(request);
    if (!result.plan.feasible) throw api::no_pipeline_plan(request, result, k.text("input"));
    return api::pipeline_plan_json(request, result, true).dump();
  }
  if (cost_model != "dapple")
    throw FieldError("cost_model", " must be piper or dapple (got \"" + cost_model + "\")");
  const std::string machines = k.text("machines", "2x8");
  const api::DapplePlanRequest request{
      w.model,
      api::dapple_settings(w, machines, static_cast<int>(k.integer("batch", 0, 1, 1000000000)),
                           static_cast<int>(k.integer("microbatch_size", 0, 1, 1000000000))),
      machines,
      {}};
  return api::dapple_plan_json(request, api::plan_dapple(request, k.text("input"))).dump();
}

std::string intra_op_plan(const py::dict& kw) {
  const Keywords k(
      kw,
      {"model", "input", "format", "planner", "cost_model", "devices", "batch", "flops",
       "bandwidth", "min_block", "keep_all_flows", "powers_of_two", "all_devices"},
      "the intra-op planner");
  api::OperatorGraph g = api::load_operator_graph(
      k.text("model"), k.text("input"), static_cast<int>(k.integer("batch", 0, 1, 1000000000)));
  api::IntraOpPlanRequest request;
  PaseSettings& s = request.settings;
  s.devices = static_cast<int>(k.integer("devices", 8, 1, 1000000));
  s.flops_per_s = k.has("flops") ? k.rate("flops", true) : 10e12;
  s.bandwidth_bytes_per_s = k.has("bandwidth") ? k.rate("bandwidth", false) : 16e9;
  s.min_block = static_cast<int>(k.integer("min_block", g.min_block, 1, 1000000000));
  s.keep_all_flows = k.flag("keep_all_flows");
  s.powers_of_two = k.flag("powers_of_two");
  s.use_all_devices = k.flag("all_devices");
  request.model = std::move(g.model);
  request.batch = g.batch;
  return api::intra_op_plan_json(request, api::plan_intra_op(request)).dump();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Which planner, as `paraplan plan` chooses (each planner then refuses the keywords it does not
// take): the transformer planner for a transformer model,
// the intra-op planner for an operator graph or ONNX file, the pipeline planner for a layer
// model or profile.
std::string plan(const py::dict& kw) {
  auto text = [&](const char* key) {
    return kw.contains(key) && py::isinstance<py::str>(kw[key]) ? kw[key].cast<std::string>()
                                                                : std::string();
  };
  const std::string model = text("model"), input = text("input"), planner = text("planner");
  if (!model.empty() && !input.empty())
    throw FieldError("model", ": give either model= or input=, not both");
  if (model.empty() && input.empty())
    throw FieldError("model",
                     ": give model= (a transformer: built-in or config.json; or an operator graph: "
                     "alexnet, resnet101, inception3, rnnlm, transformer) or input= (a layer "
                     "model, profile or ONNX file)");
  if (!model.empty() && api::is_transformer_model(model) &&
      (planner.empty() || planner == "auto" || planner == "llm"))
    return transformer_plan(kw);
  if (planner == "intra-op" || !model.empty() || ends_with(input, ".onnx") ||
      text("format") == "onnx")
    return intra_op_plan(kw);
  return pipeline_plan(kw);
}

std::string evaluate(const py::dict& kw) {
  const Keywords k(kw,
                   with({"model", "cluster", "devices", "batch", "stage_layers", "export"}, kKnobs),
                   "evaluate");
  const TransformerConfig model = api::load_transformer(k.text("model"));
  api::TransformerKnobs t = knobs(k);
  t.recompute = recompute_keyword(kw);
  t.stage_layers = k.text("stage_layers");
  const TrainingConfig config = api::training_config(
      t, static_cast<int>(k.integer("devices", 0, 1, 1 << 20)), k.integer("batch", 0, 1, 1 << 30));
  const std::string cluster_name = k.text("cluster", "dgx-a100");
  Cluster cluster = api::one_device_type(api::load_cluster(cluster_name, config.devices()),
                                         config.devices(), "evaluate");
  api::apply_memory_knobs(t, cluster);
  const AnalyticResult r =
      api::evaluate({model, cluster, api::load_calibration(t.calibration, cluster), config});
  io::Json j = api::evaluate_json(config, r, model.name, cluster_name, cluster.device_types[0]);
  if (k.has("export")) j["export"] = api::export_plan(k.text("export"), model, config);
  return j.dump();
}

std::string frontier(const py::dict& kw) {
  const Keywords k(kw, with({"model", "cluster", "devices", "batch", "uniform_stages"}, kKnobs),
                   "the transformer frontier");
  const TransformerConfig model = api::load_transformer(k.text("model"));
  const std::string cluster_name = k.text("cluster", "dgx-a100");
  const int devices = static_cast<int>(k.integer("devices", 8, 1, 1 << 20));
  Cluster cluster = api::one_device_type(api::load_cluster(cluster_name, devices), devices,
                                         "the transformer frontier");
  api::TransformerKnobs t = knobs(k);
  t.recompute = recompute_keyword(kw);
  api::apply_memory_knobs(t, cluster);
  const api::TransformerFrontierRequest request{
      model, cluster, api::load_calibration(t.calibration, cluster),
      api::search_settings(t, devices, k.integer("batch", 512, 1, 1 << 30),
                           k.flag("uniform_stages"))};
  return api::transformer_frontier_json(request, cluster_name, api::transformer_frontier(request))
      .dump();
}

std::string simulate(const py::dict& kw) {
  const Keywords k(kw, {"plan", "schedule", "stack"}, "simulate");
  return api::simulation_json(
             api::simulate_plan({k.text("plan"), k.text("schedule"), false, k.text("stack")}))
      .dump();
}

}  // namespace
}  // namespace paraplan::python

PYBIND11_MODULE(_paraplan, m) {
  using namespace paraplan;
  m.doc() = "paraplan's C++ core: plan, evaluate, frontier and simulate (JSON documents)";
  static py::exception<Error> base(m, "Error");
  static py::object kinds[] = {py::reinterpret_steal<py::object>(PyErr_NewException(
                                   "paraplan._paraplan.UsageError", base.ptr(), nullptr)),
                               py::reinterpret_steal<py::object>(PyErr_NewException(
                                   "paraplan._paraplan.InputError", base.ptr(), nullptr)),
                               py::reinterpret_steal<py::object>(PyErr_NewException(
                                   "paraplan._paraplan.InfeasibleError", base.ptr(), nullptr)),
                               py::reinterpret_steal<py::object>(PyErr_NewException(
                                   "paraplan._paraplan.IoError", base.ptr(), nullptr)),
                               py::reinterpret_steal<py::object>(PyErr_NewException(
                                   "paraplan._paraplan.LimitError", base.ptr(), nullptr)),
                               py::reinterpret_steal<py::object>(PyErr_NewException(
                                   "paraplan._paraplan.InternalError", base.ptr(), nullptr))};
  const char* names[] = {"UsageError", "InputError", "InfeasibleError",
                         "IoError",    "LimitError", "InternalError"};
  for (int i = 0; i < 6; ++i) m.attr(names[i]) = kinds[i];
  py::register_exception_translator([](std::exception_ptr p) {
    auto raise = [](ErrorKind kind, const std::string& message) {
      const int i = static_cast<int>(kind) - 2;
      PyErr_SetString(i >= 0 && i < 6 ? kinds[i].ptr() : base.ptr(), message.c_str());
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const RuleViolation& e) {  // a knob rule, in the keywords' words
      raise(e.kind(),
            e.violation().render([](Knob knob) { return std::string(knob_field(knob)); }));
    } catch (const FieldError& e) {  // a keyword's value
      raise(e.kind(), e.field() + e.rest());
    } catch (const Error& e) {
      raise(e.kind(), e.what());
    }
  });
  m.def("plan", &python::plan, "The plan JSON of `paraplan plan --json` for these keywords");
  m.def("evaluate", &python::evaluate, "The JSON of `paraplan evaluate --json`");
  m.def("frontier", &python::frontier, "The JSON of `paraplan frontier --model ... --json`");
  m.def("simulate", &python::simulate, "The JSON of `paraplan simulate PLAN --json`");
}
