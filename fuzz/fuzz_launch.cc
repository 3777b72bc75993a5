// The users' launch configurations: the same bytes as Megatron-LM arguments, a NeMo recipe, a
// DeepSpeed configuration, a torchtitan job, a torchtitan Python recipe (or its launch) and a
// Megatron-Bridge launch; each read launch's training knobs written back, a torchtitan job or
// recipe resolved on a few world sizes.
#include "engines/deepspeed_config.h"
#include "engines/megatron_args.h"
#include "engines/megatron_bridge.h"
#include "engines/nemo_recipe.h"
#include "engines/torchtitan_config.h"
#include "engines/torchtitan_recipe.h"
#include "fuzz_support.h"
#include "io/transformer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = paraplan::fuzz::text(data, size);
  auto written = [](const paraplan::engines::LaunchConfig& launch) {
    if (launch.model) paraplan::fuzz::write_out(paraplan::io::transformer_to_json(*launch.model));
  };
  paraplan::fuzz::refuse_only_with_error(
      [&] { written(paraplan::engines::read_megatron_args(text, "args.txt")); });
  paraplan::fuzz::refuse_only_with_error(
      [&] { written(paraplan::engines::read_nemo_recipe(text, "recipe.yaml")); });
  paraplan::fuzz::refuse_only_with_error(
      [&] { written(paraplan::engines::read_deepspeed_config(text, "ds_config.json")); });
  paraplan::fuzz::refuse_only_with_error(
      [&] { written(paraplan::engines::read_megatron_bridge_launch(text, "launch.sh")); });
  paraplan::fuzz::refuse_only_with_error([&] {
    const paraplan::engines::LaunchConfig job =
        paraplan::engines::read_torchtitan_config(text, "job.toml");
    for (const int world : {1, 8, 48})
      paraplan::fuzz::refuse_only_with_error(
          [&] { (void)paraplan::engines::complete_torchtitan(job, 32, world); });
  });
  paraplan::fuzz::refuse_only_with_error([&] {
    const paraplan::engines::LaunchConfig recipe =
        paraplan::engines::read_torchtitan_recipe(text, "recipe.py");
    written(recipe);
    for (const int world : {1, 8, 48})
      paraplan::fuzz::refuse_only_with_error(
          [&] { (void)paraplan::engines::complete_torchtitan(recipe, 32, world); });
  });
  return 0;
}
