// The intra-op path of `paraplan plan`: load an operator graph, build PaSE's cost network, solve
// it exactly, print or write the per-layer splits.
#include "cli/intra_op_command.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/flags.h"
#include "cost/pase_cost.h"
#include "io/chrome_trace.h"
#include "io/dot_writer.h"
#include "io/graph_svg.h"
#include "io/native_json.h"
#include "io/onnx_reader.h"
#include "ir/error.h"
#include "ir/units.h"
#include "report/plan_report.h"
#include "search/intra_op.h"
#include "sim/intra_op_program.h"
#include "zoo/pase_graphs.h"

namespace paraplan::cli {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::kUsage, "", message); }

double flops_per_s(const std::string& text) {
  return text.empty() ? 10e12 : flops_flag("--flops", text);
}

double bandwidth(const std::string& text) {
  return text.empty() ? 16e9 : bandwidth_flag("--bandwidth", text);
}

std::string table(const Plan& plan, const Model& model, const PaseSettings& s, int batch) {
  std::string out = fmt::format(
      "intra-op plan of {} (batch {}) on {} devices: pase cost model, {:g} TFLOP/s and {:g} GB/s "
      "per device\n",
      model.name, batch, s.devices, s.flops_per_s / 1e12, s.bandwidth_bytes_per_s / 1e9);
  out += fmt::format("{:>5}  {:<32} {:<12} {:<26} {:>7} {:>18} {:>18}\n", "id", "layer", "type",
                     "split (dim/parts)", "devices", "layer cost", "redistribution");
  for (const auto& ls : plan.layer_splits) {
    const Layer& layer = model.layers[ls.layer];
    std::string name = layer.name.size() > 32 ? layer.name.substr(0, 29) + "..." : layer.name;
    out += fmt::format("{:>5}  {:<32} {:<12} {:<26} {:>7} {:>18.2f} {:>18.2f}\n", layer.id, name,
                       op_kind_name(layer.op->kind), layer.op->split_text(ls.split), ls.devices,
                       ls.compute + ls.communication, ls.redistribution);
  }
  out += fmt::format("total cost: {:.2f} FLOP-equivalents per device (PaSE's objective)\n",
                     plan.objective);
  out += fmt::format("estimated step time: {:.6g} s\n", *plan.step_time_s);
  return out;
}

}  // namespace

int run_intra_op(const IntraOpArgs& args) {
  zoo::OperatorWorkload w;
  int batch = args.batch > 0 ? args.batch : 128;
  if (!args.model.empty()) {
    if (!args.input.empty()) usage("give either INPUT or --model, not both");
    w = zoo::pase_graph(args.model, batch);
  } else if (args.input.empty()) {
    usage(
        "the intra-op planner needs an operator graph: --model NAME (alexnet, resnet101, "
        "inception3, rnnlm, transformer) or an ONNX file");
  } else {
    if (args.format != "auto" && args.format != "onnx")
      usage("the intra-op planner reads ONNX files (--format onnx) or built-in models (--model)");
    io::OnnxOptions o;
    o.batch = args.batch;
    io::OnnxModel m = io::read_onnx(args.input, o);
    w.model = std::move(m.model);
    w.min_block = 1;
    batch = static_cast<int>(m.batch);
  }
  PaseSettings s;
  s.devices = args.devices > 0 ? args.devices : 8;
  s.flops_per_s = flops_per_s(args.flops);
  s.bandwidth_bytes_per_s = bandwidth(args.bandwidth);
  s.min_block = args.min_block > 0 ? args.min_block : w.min_block;
  s.keep_all_flows = args.keep_all_flows;
  s.powers_of_two = args.powers_of_two;
  s.use_all_devices = args.all_devices;
  PaseCostModel cost(w.model, s);
  IntraOpOptions solve;
  solve.progress = args.progress;
  IntraOpResult r = solve_intra_op(cost.network(), solve);
  Plan plan = cost.to_plan(r.choice);
  io::Json j = io::plan_to_json(plan, w.model);
  j["planner"] = "intra-op";
  j["devices"] = s.devices;
  j["batch"] = batch;
  j["flops_per_s"] = s.flops_per_s;
  j["bandwidth_bytes_per_s"] = s.bandwidth_bytes_per_s;
  j["min_block"] = s.min_block;
  j["keep_all_flows"] = s.keep_all_flows;
  j["powers_of_two"] = s.powers_of_two;
  j["all_devices"] = s.use_all_devices;
  j["elimination"] = {{"induced_width", r.max_dependent},
                      {"largest_table_entries", r.largest_table},
                      {"work", r.work}};
  std::string text = j.dump(2) + "\n";
  if (!args.output.empty()) io::write_text_file(args.output, text);
  if (!args.dot.empty()) io::write_text_file(args.dot, io::model_to_dot(w.model, &plan));
  if (!args.report.empty() || !args.trace.empty()) {
    std::vector<std::string> names;
    for (const LayerSplit& ls : plan.layer_splits) names.push_back(w.model.layers[ls.layer].name);
    const sim::Result r =
        sim::simulate(sim::intra_op_program(plan.layer_splits, names, s.flops_per_s, s.devices));
    if (!args.trace.empty()) io::write_chrome_trace(args.trace, r.timeline);
    if (!args.report.empty())
      io::write_text_file(
          args.report,
          report::intra_op_report(
              w.model.name, s.devices, s.flops_per_s, plan.objective,
              report::intra_op_rows(w.model, plan), r, io::operator_graph_svg(w.model, plan),
              {{"batch", std::to_string(batch)},
               {"bandwidth",
                fmt::format("{:.4g} GB/s per device", s.bandwidth_bytes_per_s / 1e9)}}));
  }
  std::cout << (args.json ? text : table(plan, w.model, s, batch));
  return 0;
}

}  // namespace paraplan::cli
