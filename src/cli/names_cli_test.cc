// Names that find what was meant: a built-in by its Hugging Face id or its Llama 3.1 name; a
// misspelt name refused as a name, with the built-in it probably meant, by every verb — never
// routed to the operator-graph planner, which does not know it either.
#include <gtest/gtest.h>

#include <string>

#include "api/inputs.h"
#include "cli/cli_test_support.h"
#include "ir/names.h"
#include "zoo/llm_models.h"

namespace paraplan::cli {
namespace {

using testing_support::Outcome;
using testing_support::run;

TEST(ModelNames, HuggingFaceIdsAndLlama31NamesAreTheBuiltIns) {
  for (const auto& [alias, builtin] : zoo::llm_model_aliases()) {
    const auto m = zoo::llm_model(alias);
    ASSERT_TRUE(m) << alias;
    EXPECT_EQ(m->name, builtin) << alias;
  }
  EXPECT_EQ(zoo::llm_model("META-LLAMA/llama-3.1-8b")->name, "llama3-8b");  // without case
  EXPECT_EQ(zoo::llm_model("meta-llama/Llama-3.1-8B-Instruct")->name, "llama3-8b");
  EXPECT_EQ(zoo::llm_model("meta-llama/Llama-2-7b-chat-hf")->name, "llama2-7b");
  EXPECT_FALSE(zoo::llm_model("meta-llama/Llama-3.1-9B"));
  const Outcome r = run("plan --model llama3.1-8b --devices 8 --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(ModelNames, AMisspeltNameSaysWhatWasMeantInEveryVerb) {
  EXPECT_EQ(nearest_name("lama3-70b", zoo::llm_model_names()), "llama3-70b");
  EXPECT_EQ(nearest_name("Llama3_8B", zoo::llm_model_names()), "llama3-8b");
  EXPECT_EQ(nearest_name("resnet", zoo::llm_model_names()), "");
  for (const char* verb : {"plan", "evaluate", "frontier", "inspect"}) {
    const Outcome r = run(std::string(verb) + " --model lama3-70b");
    EXPECT_EQ(r.exit_code, 2) << verb << "\n" << r.out;
    EXPECT_NE(r.out.find("--model: \"lama3-70b\" is not a built-in model or a file; did you mean "
                         "\"llama3-70b\"?"),
              std::string::npos)
        << verb << "\n"
        << r.out;
    EXPECT_EQ(r.out.find("operator graphs: alexnet"), r.out.find("operator graphs:")) << r.out;
  }
  const Outcome graph = run("plan --model alexnt --devices 8");
  EXPECT_NE(graph.out.find("did you mean \"alexnet\"?"), std::string::npos) << graph.out;
}

}  // namespace
}  // namespace paraplan::cli

namespace {

// A slip in a flag or a command is answered with the one meant, exit 2 (usage).
TEST(CliNames, FlagAndCommandSlipsGetDidYouMean) {
  using paraplan::testing_support::run;
  const auto flag = run("plan --model llama3-8b --devcies 8");
  EXPECT_EQ(flag.exit_code, 2) << flag.out;
  EXPECT_NE(flag.out.find("did you mean --devices?"), std::string::npos) << flag.out;
  const auto seq = run("evaluate --model llama3-8b --seqlen 4096");
  EXPECT_EQ(seq.exit_code, 2) << seq.out;
  EXPECT_NE(seq.out.find("did you mean --seq-len?"), std::string::npos) << seq.out;
  const auto verb = run("plna");
  EXPECT_EQ(verb.exit_code, 2) << verb.out;
  EXPECT_NE(verb.out.find("unknown command \"plna\"; did you mean \"plan\"?"), std::string::npos)
      << verb.out;
  const auto far = run("frobnicate");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.out.find("did you mean"), std::string::npos) << far.out;
  EXPECT_NE(far.out.find("commands: plan,"), std::string::npos) << far.out;
}

}  // namespace

namespace {

// A bad value says what is wrong and what would be valid, with the choice probably meant
// (CLI11 said "Could not convert: --batch = 2.5", "megatorn not in {...}", "× 5").
TEST(CliNames, BadValuesSayWhatWouldBeValid) {
  using paraplan::testing_support::run;
  const std::pair<const char*, const char*> cases[] = {
      {"plan --batch 2.5", "--batch 2.5: expected a whole number"},
      {"plan --devices abc", "--devices abc: expected a whole number from 1 to 1048576"},
      {"plan --devices 0", "--devices 0: expected a value from 1 to 1048576"},
      {"frontier --memory-step 2", "--memory-step 2: expected a value from 0 to 0.5"},
      {"plan --stack megatorn",
       "--stack megatorn: expected one of megatron, fsdp, deepspeed; did you mean \"megatron\"?"},
      {"evaluate --precision bf61", "did you mean \"bf16\"?"},
      {"plan --recompute ful", "(got \"ful\"; did you mean \"full\"?)"},
      {"plan --model llama3-8b --tp 3 --devices 16",
       "--devices 16: not divisible by tp × cp × pp = 3 × 1 × 1 = 3 (data parallelism would be "
       "5.33 replicas); valid: a multiple of 3, e.g. 15 or 18"}};
  for (const auto& [command, words] : cases) {
    const auto r = run(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.out;
    EXPECT_NE(r.out.find(words), std::string::npos) << command << "\n" << r.out;
  }
  EXPECT_EQ(run("plan --stack xyzzy").out.find("did you mean"), std::string::npos);
}

}  // namespace
