// The inspect subcommand: the API describes the model; the answer is printed.
#include "cli/inspect_command.h"

#include <iostream>
#include <memory>

#include "api/jobs.h"

namespace paraplan::cli {
namespace {

struct InspectArgs {
  std::string model;
  int batch = 0;
  bool json = false;
};

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd =
      app.add_subcommand("inspect",
                         "Show what paraplan reads from a model: a transformer's architecture and "
                         "parameter counts, or an operator graph's layers");
  cmd->add_option("--model", args->model,
                  "Built-in model (gpt3-175b, llama3-405b, mixtral-8x7b, alexnet, ...), a Hugging "
                  "Face config.json or an ONNX file")
      ->required();
  cmd->add_option("--batch", args->batch,
                  "Operator graphs: batch size (default 128; ONNX: the file's)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  cmd->callback([args, &exit_code] {
    const api::JobOutcome out = api::inspect_job(args->model, args->batch, !args->json);
    std::cout << (args->json ? out.document.dump(2) + "\n" : out.words);
    exit_code = 0;
  });
}

}  // namespace paraplan::cli
