// The knob table (ir/knobs.h) walked against every front end that takes knobs: the CLI's flags
// (present in each verb's help, refused outside their range by the flag's name), the plan file's
// `config` (its keys are the table's, read in the table's ranges), and each engine's vocabulary
// (the options a launch's diff lists are the table's spellings, and Megatron-LM's spellings are
// options Megatron-LM has). python/tests/test_knobs.py walks the same table through Python.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "api/knobs.h"
#include "cli/cli_test_support.h"
#include "engines/deepspeed_config.h"
#include "engines/megatron_args.h"
#include "engines/megatron_bridge.h"
#include "engines/megatron_options.h"
#include "engines/nemo_recipe.h"
#include "engines/torchtitan_config.h"
#include "io/transformer_json.h"
#include "ir/knobs.h"
#include "zoo/llm_models.h"

namespace paraplan::cli {
namespace {

using testing_support::Outcome;
using testing_support::run;

// The knobs the request's knobs hold (devices and batch are each verb's own).
bool takes(const KnobSpec& s) {
  api::TransformerKnobs k;
  return !std::holds_alternative<std::monostate>(api::knob_slot(k, s.knob));
}

TEST(KnobTable, EveryRowIsWholeAndNamedOnce) {
  std::set<std::string_view> keywords, flags, keys;
  for (const KnobSpec& s : knob_table()) {
    EXPECT_EQ(&knob_spec(s.knob), &s);
    EXPECT_TRUE(keywords.insert(s.keyword).second) << s.keyword;
    EXPECT_TRUE(flags.insert(s.flag).second) << s.flag;
    if (!s.config_key.empty()) {
      EXPECT_TRUE(keys.insert(s.config_key).second) << s.config_key;
    }
    EXPECT_EQ(
        s.flag, "--" +
                    [&] {
                      std::string k(s.keyword);
                      for (char& c : k)
                        if (c == '_') c = '-';
                      return k;
                    }())
        << "the flag is the keyword with dashes";
    EXPECT_FALSE(s.help.empty()) << s.keyword;
    EXPECT_FALSE(s.default_text.empty()) << s.keyword;
    EXPECT_NE(s.stacks, 0u) << s.keyword;
    if (s.type == KnobType::kInteger || s.type == KnobType::kReal) {
      EXPECT_LT(s.min, s.max) << s.keyword;
    }
    if (s.type == KnobType::kChoice) {
      EXPECT_NE(s.choices.find('|'), std::string::npos);
    }
  }
}

TEST(KnobTable, EveryVerbTakesEveryKnobByItsFlagAndRange) {
  const std::string model = "--model gpt-1.7b --devices 16 --batch 64 ";
  for (const char* verb : {"plan", "evaluate", "frontier"}) {
    const Outcome help = run(std::string(verb) + " --help");
    for (const KnobSpec& s : knob_table())
      EXPECT_NE(help.out.find(std::string(s.flag) + " "), std::string::npos)
          << verb << " --help lacks " << s.flag;
  }
  for (const KnobSpec& s : knob_table()) {
    if (!takes(s) || s.type != KnobType::kInteger) continue;
    for (double wrong : {s.min - 1, s.max + 1}) {
      const Outcome r = run(fmt::format("evaluate {}{} {:.0f}", model, s.flag, wrong));
      EXPECT_EQ(r.exit_code, 2) << s.flag << " " << wrong << "\n" << r.out;
      EXPECT_NE(r.out.find(s.flag), std::string::npos) << r.out;
    }
  }
  for (const KnobSpec& s : knob_table()) {
    if (s.type != KnobType::kChoice) continue;
    const Outcome r = run(fmt::format("evaluate {}{} no-such-choice", model, s.flag));
    EXPECT_EQ(r.exit_code, 2) << s.flag << "\n" << r.out;
  }
}

TEST(KnobTable, ThePlanFilesConfigHasTheTablesKeysInItsRanges) {
  TrainingConfig t;
  t.moe_capacity_factor = 1.25;  // written only when not their defaults
  t.fp32_loss = false;
  t.fused_loss = true;
  t.optimizer_moments = OptimizerMoments::kBf16;
  t.moe_shared_expert_overlap = true;
  t.precision_aware_optimizer = true;
  t.stage_layers = {1};
  const io::Json j = io::training_to_json(t);
  std::set<std::string> written;
  for (const auto& [key, value] : j.items()) written.insert(key);
  std::set<std::string> table;
  for (const KnobSpec& s : knob_table())
    if (!s.config_key.empty()) table.insert(std::string(s.config_key));
  EXPECT_EQ(written, table);
  for (const KnobSpec& s : knob_table()) {
    if (s.config_key.empty() || s.type != KnobType::kInteger) continue;
    io::Json wrong = j;
    wrong[std::string(s.config_key)] = static_cast<long long>(s.max) + 1;
    try {
      (void)io::training_from_json(io::JsonObject(wrong, "p.json", "/config"));
      ADD_FAILURE() << s.config_key << " above its range was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("/config/" + std::string(s.config_key)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(KnobTable, EnginesSpellTheKnobsAsTheTableDoes) {
  // Megatron-LM's spellings are options Megatron-LM has (the reader's vocabulary).
  for (const KnobSpec& s : knob_table()) {
    const std::string spelled(s.spelled(Engine::kMegatronLm));
    if (spelled.empty()) continue;
    EXPECT_TRUE(engines::megatron_read_options().count(spelled) ||
                engines::megatron_ignored_options().count(spelled))
        << spelled;
  }
  // The options each launch's diff lists are the table's spellings, or the few a spelled
  // knob brings along (how many layers recompute, the accumulation steps, ...).
  const std::set<std::string> along = {"--recompute-method",
                                       "--recompute-num-layers",
                                       "model.activations_checkpoint_method",
                                       "model.activations_checkpoint_num_layers",
                                       "parallelism.fsdp_reshard_after_forward",
                                       "parallelism.pipeline_parallel_microbatch_size",
                                       "gradient_accumulation_steps",
                                       "model.recompute_method",
                                       "model.recompute_num_layers",
                                       "optimizer.use_distributed_optimizer",
                                       "optimizer.overlap_param_gather"};
  const TransformerConfig model = *zoo::llm_model("mixtral-8x7b");
  TrainingConfig t;
  t.tp = 2, t.pp = 2, t.cp = 2, t.ep = 2, t.vpp = 2, t.dp = 4, t.micro_batch = 2;
  t.sequence_parallel = true, t.zero_stage = 1, t.recompute_layers = 2;
  t.overlap_grad_reduce = t.overlap_param_gather = t.tp_comm_overlap = true;
  t.bf16_gradient_reduction = true;
  const std::pair<Engine, std::vector<std::pair<std::string, std::string>>> listed[] = {
      {Engine::kMegatronLm, engines::megatron_searched_options(model, t)},
      {Engine::kNemo, engines::nemo_searched_options(model, t)},
      {Engine::kTorchtitan, engines::torchtitan_searched_options(t)},
      {Engine::kMegatronDeepSpeed, engines::deepspeed_searched_options(t)},
      {Engine::kMegatronBridge, engines::megatron_bridge_searched_options(model, t)}};
  for (const auto& [engine, options] : listed) {
    std::set<std::string> spellings;
    for (const KnobSpec& s : knob_table())
      if (!s.spelled(engine).empty()) spellings.insert(std::string(s.spelled(engine)));
    EXPECT_FALSE(options.empty());
    for (const auto& [option, value] : options)
      EXPECT_TRUE(spellings.count(option) || along.count(option))
          << engine_name(engine) << ": " << option << " is not the table's spelling of a knob";
  }
}

}  // namespace
}  // namespace paraplan::cli
