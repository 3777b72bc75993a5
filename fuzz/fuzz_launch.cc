// The users' launch configurations: the same bytes as Megatron-LM arguments, a NeMo recipe and a
// DeepSpeed configuration and a torchtitan job; each read launch's training knobs written back,
// a torchtitan job resolved on a few world sizes.
#include "fuzz_support.h"
#include "io/deepspeed_config.h"
#include "io/megatron_args.h"
#include "io/nemo_recipe.h"
#include "io/torchtitan_config.h"
#include "io/transformer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = paraplan::fuzz::text(data, size);
  auto written = [](const paraplan::io::LaunchConfig& launch) {
    if (launch.model) paraplan::fuzz::write_out(paraplan::io::transformer_to_json(*launch.model));
  };
  paraplan::fuzz::refuse_only_with_error(
      [&] { written(paraplan::io::read_megatron_args(text, "args.txt")); });
  paraplan::fuzz::refuse_only_with_error(
      [&] { written(paraplan::io::read_nemo_recipe(text, "recipe.yaml")); });
  paraplan::fuzz::refuse_only_with_error(
      [&] { written(paraplan::io::read_deepspeed_config(text, "ds_config.json")); });
  paraplan::fuzz::refuse_only_with_error([&] {
    const paraplan::io::LaunchConfig job = paraplan::io::read_torchtitan_config(text, "job.toml");
    for (const int world : {1, 8, 48})
      paraplan::fuzz::refuse_only_with_error(
          [&] { (void)paraplan::io::complete_torchtitan(job, 32, world); });
  });
  return 0;
}
