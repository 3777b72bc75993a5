// The evaluate subcommand: its flags become an api::EvaluateOptions; the answer is printed.
#include "cli/evaluate_command.h"

#include <iostream>
#include <iterator>
#include <memory>

#include "api/jobs.h"
#include "cli/flags.h"
#include "cli/transformer_common.h"

namespace paraplan::cli {
namespace {

struct EvaluateArgs {
  api::EvaluateOptions options;
  std::vector<std::string> from;
  bool json = false;
};

int run(EvaluateArgs& a, const std::vector<std::string>& given) {
  a.options.words = !a.json;
  a.options.given = fields_of(given);
  if (!a.from.empty()) {
    a.options.from_format = a.from[0];
    a.options.from_file = a.from[1];
    if (a.options.from_file == "-")
      a.options.from_text.assign(std::istreambuf_iterator<char>(std::cin), {});
  }
  const api::JobOutcome out = api::evaluate_job(a.options);
  if (!out.exported.empty())
    std::cout << out.exported;
  else
    std::cout << (a.json ? out.document.dump(2) + "\n" : out.words);
  return 0;
}

}  // namespace

void add_evaluate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<EvaluateArgs>();
  CLI::App* cmd =
      app.add_subcommand("evaluate",
                         "Price one transformer training configuration: iteration time, tokens/s, "
                         "TFLOP/s per device, MFU and memory per device");
  cmd->add_option("--model", a->options.model,
                  "Built-in transformer (gpt3-175b, llama3-405b, ...) or a config.json (with "
                  "--from: when the launch does not give the model's shape)");
  cmd->add_option("--from", a->from,
                  "The job as you launch it, priced as it is and against the best plan on the "
                  "same devices and batch, with the change as a diff: megatron FILE (Megatron-LM "
                  "pretrain_gpt.py arguments, a shell line or one per line), nemo FILE (a NeMo "
                  "GPT recipe's YAML), deepspeed FILE (a ds_config.json; with --model and "
                  "--seq-len), torchtitan FILE (a job TOML) or bridge FILE (a Megatron-Bridge "
                  "run_recipe.py launch of the vanilla GPT recipe); FILE - reads standard input")
      ->expected(2)
      ->type_name("FORMAT FILE");
  cmd->add_flag("--explain", a->options.explain,
                "With --from: list the keys read and those ignored");
  cmd->add_option(
      "--cluster", a->options.cluster,
      "Cluster preset (dgx-a100, dgx-h100, h200, dgx-b200, gb200-nvl72, vtrain-a100) or a "
      "paraplan-cluster "
      "file (.json, .yaml)");
  add_count_option(cmd, Knob::kDevices, a->options.devices, "GPUs (default tp × cp × pp × dp)");
  add_count_option(cmd, Knob::kGlobalBatch, a->options.batch,
                   "Global batch in sequences (default 512)");
  add_transformer_knob_flags(cmd, a->options.knobs, false);
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--export", a->options.export_to,
                  "Print the configuration for a training engine instead: megatron (Megatron-LM's "
                  "torchrun line), nemo (a NeMo recipe YAML), deepspeed (Megatron-DeepSpeed's "
                  "line and its DeepSpeed JSON), torchtitan (a job TOML, torchtitan "
                  "238fa99), torchtitan-recipe (torchtitan b5bcd76's Python configuration and "
                  "its launch) or bridge (a Megatron-Bridge run_recipe.py launch)");
  cmd->callback([a, cmd, &exit_code] { exit_code = run(*a, given_flags(*cmd)); });
}

}  // namespace paraplan::cli
