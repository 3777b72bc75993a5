// The Python module `paraplan._paraplan`: the library API (src/api) behind five calls that take
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
#include "keywords.h"

namespace py = pybind11;

namespace paraplan::python {
namespace {

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// paraplan.plan(): the keywords become the API's plan request, as `paraplan plan`'s flags do;
// the API chooses the planner and refuses the keywords it does not take.
std::string plan(const py::dict& kw) {
  const Keywords k(kw, {}, "");  // the API refuses, naming the planner, what it does not take
  api::PlanOptions o;
  o.given = k.names();
  o.input = k.text("input");
  o.format = k.text("format", "auto");
  o.cost_model = k.text("cost_model", "auto");
  o.planner = k.text("planner", "auto");
  o.model = k.text("model");
  o.cluster = k.text("cluster");
  o.from_format = k.text("from_format");
  o.from_file = k.text("from_file");
  o.explain = k.flag("explain");
  o.stage_dp = k.text("stage_dp");
  o.devices = static_cast<int>(
      k.integer("devices", 0, 1, static_cast<long long>(knob_spec(Knob::kDevices).max)));
  if (k.has("memory")) o.memory = std::to_string(static_cast<long long>(k.bytes("memory")));
  if (k.has("bandwidth"))
    o.bandwidth =
        k.is_text("bandwidth") ? k.text("bandwidth") : fmt_rate(k.rate("bandwidth", false), "B/s");
  o.microbatches = static_cast<int>(k.integer("microbatches", 0, 1, kMaxMicrobatches));
  o.machines = k.text("machines");
  o.placement = k.text("placement", "search");
  o.objective = k.text("objective", "iteration");
  o.coarsen = static_cast<int>(k.integer("coarsen", 0, 2, 100000));
  o.model_device = k.text("model_device");
  o.batch = k.integer("batch", 0, 1, static_cast<long long>(knob_spec(Knob::kGlobalBatch).max));
  o.microbatch_size = static_cast<int>(k.integer("microbatch_size", 0, 1, 1000000000));
  o.profile_batch = static_cast<int>(k.integer("profile_batch", 0, 1, 1000000000));
  if (k.has("flops"))
    o.flops = k.is_text("flops") ? k.text("flops") : fmt_rate(k.rate("flops", true), "FLOP/s");
  o.min_block = static_cast<int>(k.integer("min_block", 0, 1, 1000000000));
  o.keep_all_flows = k.flag("keep_all_flows");
  o.powers_of_two = k.flag("powers_of_two");
  o.all_devices = k.flag("all_devices");
  o.knobs = knobs(k);
  o.knobs.memory.clear();  // plan's memory is the cluster's (o.memory)
  o.uniform_stages = k.flag("uniform_stages");
  o.top = static_cast<int>(k.integer("top", 5, 1, 1000));
  o.resimulate = static_cast<int>(k.integer("resimulate", 0, 0, 1000));
  o.time_limit_s = k.number("time_limit", -1, 0, 1e6);
  o.export_to = k.text("export");
  if (k.has("train_tokens"))
    o.train_tokens =
        k.is_text("train_tokens")
            ? k.text("train_tokens")
            : std::to_string(static_cast<long long>(k.number("train_tokens", 0, 1, 1e18)));
  o.days = k.number("days", 0, 0, 1e6);
  o.gpu_hour_price = k.number("gpu_hour_price", 0, 0, 1e9);
  const api::PlanOutcome out = api::plan(o);
  if (out.failure) throw *out.failure;
  return out.document.dump();
}

std::string evaluate(const py::dict& kw) {
  const Keywords k(kw,
                   with({"model", "cluster", "devices", "batch", "export", "from_format",
                         "from_file", "explain"},
                        api::kKnobFields),
                   "evaluate");
  api::EvaluateOptions o;
  o.model = k.text("model");
  o.cluster = k.text("cluster", std::string(kDefaultCluster));
  o.devices = static_cast<int>(
      k.integer("devices", 0, 1, static_cast<long long>(knob_spec(Knob::kDevices).max)));
  o.batch = k.integer("batch", 0, 1, static_cast<long long>(knob_spec(Knob::kGlobalBatch).max));
  o.knobs = knobs(k);
  o.knobs.stage_layers = k.text("stage_layers");
  o.export_to = k.text("export");
  o.from_format = k.text("from_format");
  o.from_file = k.text("from_file");
  o.explain = k.flag("explain");
  o.given = k.names();
  return api::evaluate_job(o).document.dump();
}

std::string frontier(const py::dict& kw) {
  const Keywords k(kw, {}, "");  // the API refuses, naming the frontier, what it does not take
  api::FrontierOptions o;
  o.given = k.names();
  o.input = k.text("input");
  o.format = k.text("format", "auto");
  o.model = k.text("model");
  o.cluster = k.text("cluster");
  o.devices = static_cast<int>(
      k.integer("devices", 0, 1, static_cast<long long>(knob_spec(Knob::kDevices).max)));
  o.batch = k.integer("batch", kDefaultGlobalBatch, 1,
                      static_cast<long long>(knob_spec(Knob::kGlobalBatch).max));
  o.knobs = knobs(k);
  if (k.has("memory")) o.memory = o.knobs.memory;
  o.knobs.memory.clear();
  o.uniform_stages = k.flag("uniform_stages");
  if (k.has("bandwidth"))
    o.bandwidth =
        k.is_text("bandwidth") ? k.text("bandwidth") : fmt_rate(k.rate("bandwidth", false), "B/s");
  o.microbatches = static_cast<int>(k.integer("microbatches", 0, 1, kMaxMicrobatches));
  o.memory_step = k.number("memory_step", 0.01, 0, kMaxMemoryStep);
  o.time_limit_s = k.number("time_limit", 30, 0, 1e6);
  o.planner = k.text("planner");
  if (k.has("flops"))
    o.flops = k.is_text("flops") ? k.text("flops") : fmt_rate(k.rate("flops", true), "FLOP/s");
  o.min_block = static_cast<int>(k.integer("min_block", 0, 1, 1000000000));
  o.powers_of_two = k.flag("powers_of_two");
  o.keep_all_flows = k.flag("keep_all_flows");
  return api::frontier_job(o).document.dump();
}

std::string simulate(const py::dict& kw) {
  const Keywords k(kw, {"plan", "schedule", "stack"}, "simulate");
  return api::simulation_json(
             api::simulate_plan({k.text("plan"), k.text("schedule"), false, k.text("stack")}))
      .dump();
}

std::string schedule(const py::dict& kw) {
  const Keywords k(kw, {"plan", "schedule"}, "schedule_of");
  return api::pipeline_schedule({k.text("plan"), k.text("schedule")}).dump();
}

std::string inspect(const py::dict& kw) {
  const Keywords k(kw, {"model", "batch"}, "inspect");
  return api::inspect_job(
             k.text("model"),
             static_cast<int>(k.integer("batch", 0, 1,
                                        static_cast<long long>(knob_spec(Knob::kGlobalBatch).max))),
             false)
      .document.dump();
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
            e.violation().render([](Knob knob) { return std::string(knob_spec(knob).keyword); }));
    } catch (const FieldError& e) {  // a keyword's value
      raise(e.kind(), e.field() + e.rest());
    } catch (const Error& e) {
      raise(e.kind(), e.what());
    }
  });
  m.def("plan", &python::plan, "The plan JSON of `paraplan plan --json` for these keywords");
  m.def("evaluate", &python::evaluate, "The JSON of `paraplan evaluate --json`");
  m.def("frontier", &python::frontier, "The JSON of `paraplan frontier --model ... --json`");
  m.def("schedule", &python::schedule,
        "The schedule of a pipeline plan file: every replica's passes, as the simulator replays "
        "them");
  m.def(
      "knob_table", [] { return api::knob_table_json().dump(); },
      "Every training knob: keyword, flag, plan-file key, type, range, default, stacks, engine "
      "spellings (ir/knobs.h)");
  m.def("inspect", &python::inspect, "The JSON of `paraplan inspect --model ... --json`");
  m.def("simulate", &python::simulate, "The JSON of `paraplan simulate PLAN --json`");
}
