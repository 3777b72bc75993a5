// The validate subcommand: the API prices every measured run; its answer in words is printed.
#include "cli/validate_command.h"

#include <iostream>
#include <memory>

#include "api/validate.h"

namespace paraplan::cli {
namespace {

struct ValidateArgs {
  std::string data = PARAPLAN_DEFAULT_VTRAIN_DIR;
  std::string mpt = PARAPLAN_DEFAULT_MPT_FILE;
  std::vector<std::string> published = {PARAPLAN_DEFAULT_PUBLISHED_FILE,
                                        PARAPLAN_DEFAULT_PUBLISHED_2024_FILE};
  std::string nemo = PARAPLAN_DEFAULT_NEMO_FILE;
  std::vector<std::string> single_gpu = {PARAPLAN_DEFAULT_SINGLE_GPU_DIR,
                                         PARAPLAN_DEFAULT_SINGLE_GPU_DIR "-2"};
  bool quiet = false;
  std::string calibration;
  int worst = 5;
};

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd =
      app.add_subcommand("validate",
                         "Compare the analytic cost model with measured iteration times: vTrain's "
                         "Megatron-DeepSpeed runs (error, plan ranking), MosaicML's MPT FSDP runs "
                         "(error, memory verdict), NVIDIA's NeMo runs on H100 (error, memory "
                         "verdict), plain PyTorch on one H100 (time, peak memory, out-of-memory "
                         "verdict) and published throughputs (MoE; torchtitan, IBM's FSDP and NeMo "
                         "FP8 runs of 2024: error, never fitted)");
  cmd->add_option("--data", args->data,
                  "Folder with ground_truth_multi.csv and ground_truth_single.csv");
  cmd->add_option(
      "--mpt", args->mpt,
      "MPT benchmark table (data/mpt's TSV or llm-foundry's Markdown tables; \"\" to skip)");
  cmd->add_option("--published", args->published,
                  "Published throughputs to compare with, never fitted: one or more files "
                  "(default data/moe's and data/published-2024's JSON, docs/formats.md "
                  "\"Published runs\"; \"\" to skip)");
  cmd->add_option("--nemo", args->nemo,
                  "NeMo / Megatron-Core H100 step times (data/nemo-h100's TSV, its SOURCE.md "
                  "gives the columns; \"\" to skip)");
  cmd->add_option("--single-gpu", args->single_gpu,
                  "Plain-PyTorch runs on one GPU with their peak memory and out-of-memory "
                  "failures: one or more folders of results.jsonl and configs/, each scored and "
                  "all pooled (default data/h100-single-gpu, the given set, and "
                  "data/h100-single-gpu-2, measured by this project; \"\" to skip)");
  cmd->add_flag("--summary", args->quiet, "Print only the summary lines");
  cmd->add_option("--worst", args->worst, "MPT rows with the largest errors to list (default 5)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--calibration", args->calibration,
                  "Calibration file to validate (JSON or YAML; default: the shipped A100 one)");
  cmd->callback([args, &exit_code] {
    // Every input is read and priced before anything is printed: a bad file is the only line.
    std::cout << api::validate_words(
        api::validate_model({args->data, args->mpt, args->published, args->nemo, args->calibration,
                             args->single_gpu}),
        args->quiet, args->worst);
    exit_code = 0;
  });
}

}  // namespace paraplan::cli
