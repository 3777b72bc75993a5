// The intra-op path of `paraplan plan`: load an operator graph, build PaSE's cost network, solve
// it exactly, print or write the per-layer splits.
#include "cli/intra_op_command.h"

#include <fmt/format.h>

#include <iostream>

#include "api/inputs.h"
#include "api/plan.h"
#include "api/results_json.h"
#include "cli/flags.h"
#include "io/chrome_trace.h"
#include "io/dot_writer.h"
#include "io/native_json.h"
#include "ir/error.h"

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
  if (!args.model.empty() && !args.input.empty()) usage("give either INPUT or --model, not both");
  if (args.model.empty() && args.input.empty())
    usage(
        "the intra-op planner needs an operator graph: --model NAME (alexnet, resnet101, "
        "inception3, rnnlm, transformer) or an ONNX file");
  if (args.model.empty() && args.format != "auto" && args.format != "onnx")
    usage("the intra-op planner reads ONNX files (--format onnx) or built-in models (--model)");
  api::OperatorGraph g = api::load_operator_graph(args.model, args.input, args.batch);
  api::IntraOpPlanRequest request;
  PaseSettings& s = request.settings;
  s.devices = args.devices > 0 ? args.devices : 8;
  s.flops_per_s = flops_per_s(args.flops);
  s.bandwidth_bytes_per_s = bandwidth(args.bandwidth);
  s.min_block = args.min_block > 0 ? args.min_block : g.min_block;
  s.keep_all_flows = args.keep_all_flows;
  s.powers_of_two = args.powers_of_two;
  s.use_all_devices = args.all_devices;
  request.model = std::move(g.model);
  request.batch = g.batch;
  request.products = {!args.trace.empty(), !args.report.empty()};
  request.progress = args.progress;
  const api::IntraOpPlanResult r = api::plan_intra_op(request);
  const Plan& plan = r.plan;
  const Model& model = request.model;
  const io::Json j = api::intra_op_plan_json(request, r);
  std::string text = j.dump(2) + "\n";
  if (!args.output.empty()) io::write_text_file(args.output, text);
  if (!args.dot.empty()) io::write_text_file(args.dot, io::model_to_dot(model, &plan));
  if (!args.trace.empty()) io::write_chrome_trace(args.trace, r.simulation->timeline);
  if (!args.report.empty()) io::write_text_file(args.report, r.report_html);
  std::cout << (args.json ? text : table(plan, model, s, request.batch));
  return 0;
}

}  // namespace paraplan::cli
