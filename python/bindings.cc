// The Python module `paraplan._paraplan`: the library API (src/api) behind four calls that take
// the keywords of the matching CLI command and return the same JSON document `--json` prints.
// Keywords are checked here, once, with the API's own parsers; errors become paraplan.Error
// subclasses carrying the CLI's message with the keyword in place of the flag.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "api/inputs.h"
#include "api/jobs.h"
#include "api/knobs.h"
#include "api/plan.h"
#include "api/plan_job.h"
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

// A rate given as a number, with its unit for the API's parser: 25e9 → "25000000000B/s".
std::string fmt_rate(double value, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g%s", value, unit);
  return text;
}

// The keywords of one call: refuses those the call does not take (unless `allowed` is empty),
// reads each as its type.
class Keywords {
 public:
  Keywords(const py::dict& given, const std::vector<std::string>& allowed, const std::string& what)
      : given_(given) {
    for (const auto& [key, value] : given) {
      const std::string name = py::str(key);
      if (value.is_none()) continue;
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end())
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

// paraplan.plan(): the keywords become the API's plan request, as `paraplan plan`'s flags do;
// the API chooses the planner and refuses the keywords it does not take.
std::string plan(const py::dict& kw) {
  const Keywords k(kw, {}, "");  // the API refuses, naming the planner, what it does not take
  api::PlanOptions o;
  for (const auto& [key, value] : kw)
    if (!value.is_none()) o.given.push_back(py::str(key));
  o.input = k.text("input");
  o.format = k.text("format", "auto");
  o.cost_model = k.text("cost_model", "auto");
  o.planner = k.text("planner", "auto");
  o.model = k.text("model");
  o.cluster = k.text("cluster");
  o.devices = static_cast<int>(k.integer("devices", 0, 1, 1000000));
  if (k.has("memory")) o.memory = std::to_string(static_cast<long long>(k.bytes("memory")));
  if (k.has("bandwidth"))
    o.bandwidth =
        k.is_text("bandwidth") ? k.text("bandwidth") : fmt_rate(k.rate("bandwidth", false), "B/s");
  o.microbatches = static_cast<int>(k.integer("microbatches", 0, 1, 1 << 30));
  o.machines = k.text("machines");
  o.placement = k.text("placement", "search");
  o.coarsen = static_cast<int>(k.integer("coarsen", 0, 2, 100000));
  o.model_device = k.text("model_device");
  o.batch = k.integer("batch", 0, 1, 1000000000);
  o.microbatch_size = static_cast<int>(k.integer("microbatch_size", 0, 1, 1000000000));
  o.profile_batch = static_cast<int>(k.integer("profile_batch", 0, 1, 1000000000));
  if (k.has("flops"))
    o.flops = k.is_text("flops") ? k.text("flops") : fmt_rate(k.rate("flops", true), "FLOP/s");
  o.min_block = static_cast<int>(k.integer("min_block", 0, 1, 1000000000));
  o.keep_all_flows = k.flag("keep_all_flows");
  o.powers_of_two = k.flag("powers_of_two");
  o.all_devices = k.flag("all_devices");
  o.knobs = knobs(k);
  o.knobs.recompute = recompute_keyword(kw);
  o.knobs.memory.clear();  // plan's memory is the cluster's (o.memory)
  o.uniform_stages = k.flag("uniform_stages");
  o.top = static_cast<int>(k.integer("top", 5, 1, 1000));
  o.resimulate = static_cast<int>(k.integer("resimulate", 0, 0, 1000));
  o.time_limit_s = k.number("time_limit", 0, 0, 1e6);
  o.export_to = k.text("export");
  const api::PlanOutcome out = api::plan(o);
  if (out.failure) throw *out.failure;
  return out.document.dump();
}

std::string evaluate(const py::dict& kw) {
  const Keywords k(kw,
                   with({"model", "cluster", "devices", "batch", "stage_layers", "export"}, kKnobs),
                   "evaluate");
  api::EvaluateOptions o;
  o.model = k.text("model");
  o.cluster = k.text("cluster", "dgx-a100");
  o.devices = static_cast<int>(k.integer("devices", 0, 1, 1 << 20));
  o.batch = k.integer("batch", 0, 1, 1 << 30);
  o.knobs = knobs(k);
  o.knobs.recompute = recompute_keyword(kw);
  o.knobs.stage_layers = k.text("stage_layers");
  o.export_to = k.text("export");
  return api::evaluate_job(o).document.dump();
}

std::string frontier(const py::dict& kw) {
  const Keywords k(kw, {}, "");  // the API refuses, naming the frontier, what it does not take
  api::FrontierOptions o;
  for (const auto& [key, value] : kw)
    if (!value.is_none()) o.given.push_back(py::str(key));
  o.model = k.text("model");
  o.cluster = k.text("cluster");
  o.devices = static_cast<int>(k.integer("devices", 0, 1, 1 << 20));
  o.batch = k.integer("batch", 512, 1, 1 << 30);
  o.knobs = knobs(k);
  o.knobs.recompute = recompute_keyword(kw);
  if (k.has("memory")) o.memory = o.knobs.memory;
  o.knobs.memory.clear();
  o.uniform_stages = k.flag("uniform_stages");
  return api::frontier_job(o).document.dump();
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
