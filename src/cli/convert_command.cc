// The convert subcommand.
#include "cli/convert_command.h"

#include <iostream>
#include <memory>

#include "api/inputs.h"
#include "io/native_json.h"
#include "ir/error.h"

namespace paraplan::cli {
namespace {

struct ConvertArgs {
  std::string input;
  std::string format = "auto";
  int profile_batch = 0;
  std::string output;
  std::string cluster_output;
};

void write(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text;
    return;
  }
  io::write_text_file(path, text);
}

int run(const ConvertArgs& args) {
  api::Workload w = api::load_workload({args.input, args.format, "", args.profile_batch});
  write(args.output, io::model_to_json(w.model).dump(2) + "\n");
  if (!args.cluster_output.empty())
    write(args.cluster_output, io::cluster_to_json(w.cluster).dump(2) + "\n");
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Write a model (Piper JSON, DAPPLE/PipeDream profile, or the built-in default) "
      "as paraplan model JSON");
  cmd->add_option("INPUT", args->input, "Model file (default: the built-in default workload)");
  cmd->add_option("--format", args->format,
                  "Input format: piper, dapple or native (default: detect)");
  cmd->add_option("--profile-batch", args->profile_batch,
                  "DAPPLE: batch size the profile was measured at (default: from the file name)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("-o,--output", args->output, "Model JSON file (default: standard output)");
  cmd->add_option("--cluster-output", args->cluster_output,
                  "Also write the input's cluster (Piper: K devices, memory, bandwidth) as "
                  "paraplan cluster JSON");
  cmd->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace paraplan::cli
