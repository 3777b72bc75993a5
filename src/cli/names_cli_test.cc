// Names that find what was meant: a built-in by its Hugging Face id or its Llama 3.1 name; a
// misspelt name refused as a name, with the built-in it probably meant, by every verb — never
// routed to the operator-graph planner, which does not know it either.
#include <gtest/gtest.h>

#include <string>

#include "api/inputs.h"
#include "cli/cli_test_support.h"
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
  EXPECT_EQ(api::nearest_name("lama3-70b", zoo::llm_model_names()), "llama3-70b");
  EXPECT_EQ(api::nearest_name("Llama3_8B", zoo::llm_model_names()), "llama3-8b");
  EXPECT_EQ(api::nearest_name("resnet", zoo::llm_model_names()), "");
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
