// Built-in transformer architectures and Hugging Face configs: parameter counts against the
// published figures.
#include "zoo/llm_models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "io/hf_config.h"
#include "io/json_fields.h"
#include "io/transformer_json.h"
#include "ir/error.h"

namespace paraplan {
namespace {

double params(const std::string& name) { return zoo::llm_model(name)->parameters(); }

TEST(LlmModels, ExactParameterCountsOfPublishedModels) {
  EXPECT_EQ(params("llama2-7b"), 6738415616.0);
  EXPECT_EQ(params("llama2-70b"), 68976648192.0);
  EXPECT_EQ(params("llama3-8b"), 8030261248.0);
  EXPECT_EQ(params("llama3-70b"), 70553706496.0);
  EXPECT_EQ(params("llama3-405b"), 405853388800.0);
  EXPECT_EQ(params("mixtral-8x7b"), 46702792704.0);
  EXPECT_NEAR(zoo::llm_model("mixtral-8x7b")->active_parameters() / 1e9, 12.88, 0.01);
  EXPECT_NEAR(params("deepseek-v3-like") / 1e9, 671, 671 * 0.02);
  EXPECT_NEAR(params("gpt3-175b") / 1e9, 175, 175 * 0.01);
}

// Shared experts are counted as the analytic model prices them: each an MLP of the shared
// width (the expert width unless given).
TEST(LlmModels, SharedExpertsAreEachAnMlpOfTheSharedWidth) {
  TransformerConfig c = *zoo::llm_model("mixtral-8x7b");
  const double none = c.parameters(), active_none = c.active_parameters();
  c.shared_experts = 2;
  c.shared_expert_ffn_hidden_size = 1024;
  const double each = static_cast<double>(c.moe_layers()) * c.mlp_parameters(1024);
  EXPECT_DOUBLE_EQ(c.parameters() - none, 2 * each);
  EXPECT_DOUBLE_EQ(c.active_parameters() - active_none, 2 * each);
  c.shared_expert_ffn_hidden_size = 0;  // the expert width
  EXPECT_DOUBLE_EQ(c.parameters() - none, 2 * static_cast<double>(c.moe_layers()) *
                                              c.mlp_parameters(c.expert_ffn_hidden_size));
}

TEST(LlmModels, MegatronScalingStudySizes) {
  // Narayanan et al. (SC'21) Table 1, billions of parameters, rounded to 0.1.
  struct Row {
    const char* name;
    double billions;
  } rows[] = {{"gpt-1.7b", 1.7},     {"gpt-3.6b", 3.6},     {"gpt-7.5b", 7.5},
              {"gpt-18.4b", 18.4},   {"gpt-39.1b", 39.1},   {"gpt-76.1b", 76.1},
              {"gpt-145.6b", 145.6}, {"gpt-310.1b", 310.1}, {"gpt-529.6b", 529.6},
              {"gpt-1t", 1008.0}};
  for (const auto& r : rows) EXPECT_NEAR(params(r.name) / 1e9, r.billions, 0.06) << r.name;
  EXPECT_FALSE(zoo::llm_model("gpt-2t"));
  for (const auto& n : zoo::llm_model_names()) EXPECT_TRUE(zoo::llm_model(n)) << n;
}

std::string hf(const std::string& file) { return std::string(PARAPLAN_TEST_DATA) + "/hf/" + file; }

TEST(HfConfig, ReadsEachFamily) {
  auto gpt2 = io::read_hf_config(hf("gpt2.json"));
  EXPECT_EQ(gpt2.parameters(), 124439808.0);  // GPT-2 small
  EXPECT_TRUE(gpt2.tied_embeddings);
  EXPECT_EQ(gpt2.ffn_hidden_size, 3072);
  auto llama = io::read_hf_config(hf("llama3-8b.json"));
  EXPECT_EQ(llama.parameters(), 8030261248.0);
  EXPECT_TRUE(llama.gated_mlp);
  EXPECT_EQ(llama.num_kv_heads, 8);
  auto mixtral = io::read_hf_config(hf("mixtral-8x7b.json"));
  EXPECT_EQ(mixtral.parameters(), 46702792704.0);
  auto neox = io::read_hf_config(hf("gpt-neox-20b.json"));
  EXPECT_EQ(neox.parameters(), 20554567680.0);
  auto qwen = io::read_hf_config(hf("qwen2-moe.json"));
  EXPECT_EQ(qwen.num_experts, 60);
  EXPECT_EQ(qwen.shared_experts, 1);
  EXPECT_NEAR(qwen.parameters() / 1e9, 14.3, 0.1);  // Qwen1.5-MoE-A2.7B
  EXPECT_NEAR(qwen.active_parameters() / 1e9, 2.7, 0.1);
}

// The 18 real config.json files of tests/data/hf-configs, each read by its family's rules,
// against the parameter count its publisher gives (parameters.tsv).
TEST(HfConfig, RealConfigsMatchTheirPublishedParameterCounts) {
  const std::string dir = std::string(PARAPLAN_TEST_DATA) + "/hf-configs/";
  std::ifstream table(dir + "parameters.tsv");
  ASSERT_TRUE(table) << dir;
  std::string line;
  std::getline(table, line);  // header
  int models = 0;
  while (std::getline(table, line)) {
    const auto tab = line.find('\t');
    const std::string name = line.substr(0, tab);
    const double published = std::stod(line.substr(tab + 1)) * 1e9;
    const TransformerConfig c = io::read_hf_config(dir + name + "/config.json");
    EXPECT_NEAR(c.parameters() / published, 1.0, 0.01) << name << ": " << c.parameters();
    // A plan file's model_config keeps every field that is priced or exported.
    const io::Json written = io::transformer_to_json(c);
    const TransformerConfig back =
        io::transformer_from_json(io::JsonObject(written, name, "/model_config"));
    EXPECT_EQ(io::transformer_to_json(back), written) << name;
    EXPECT_EQ(back.parameters(), c.parameters()) << name;
    EXPECT_EQ(back.active_parameters(), c.active_parameters()) << name;
    EXPECT_EQ(back.mla(), c.mla()) << name;
    EXPECT_EQ(back.windowed_layers(), c.windowed_layers()) << name;
    EXPECT_EQ(back.attention_softcap, c.attention_softcap) << name;
    EXPECT_EQ(back.rotary_base, c.rotary_base) << name;
    EXPECT_EQ(back.mtp_layers, c.mtp_layers) << name;
    EXPECT_EQ(back.alibi, c.alibi) << name;
    EXPECT_EQ(back.dropout, c.dropout) << name;
    ++models;
  }
  EXPECT_EQ(models, 18);
}

TEST(HfConfig, FamilyFeaturesAreRead) {
  const std::string dir = std::string(PARAPLAN_TEST_DATA) + "/hf-configs/";
  const auto v3 = io::read_hf_config(dir + "deepseek-v3/config.json");
  EXPECT_TRUE(v3.mla());
  EXPECT_EQ(v3.q_lora_rank, 1536);
  EXPECT_EQ(v3.kv_lora_rank, 512);
  EXPECT_EQ(v3.qk_rope_head_dim, 64);
  EXPECT_EQ(v3.v_head_dim, 128);
  EXPECT_EQ(v3.mtp_layers, 1);
  EXPECT_EQ(v3.moe_layers(), 58);
  // Falcon: one key-value head (multi_query), the MLP 4h wide, tied; Nemotron: squared ReLU (no
  // gate), half of each head rotated; Cohere: tied by default; OLMo 2: QK-norm; SmolLM3: tied.
  const auto falcon = io::read_hf_config(dir + "falcon-7b/config.json");
  EXPECT_EQ(falcon.num_kv_heads, 1);
  EXPECT_EQ(falcon.ffn_hidden_size, 4 * 4544);
  EXPECT_FALSE(falcon.gated_mlp);
  EXPECT_TRUE(falcon.tied_embeddings);
  const auto nemotron = io::read_hf_config(dir + "minitron-8b-base/config.json");
  EXPECT_FALSE(nemotron.gated_mlp);
  EXPECT_EQ(nemotron.partial_rotary, 0.5);
  EXPECT_EQ(nemotron.head_dim, 128);
  EXPECT_TRUE(io::read_hf_config(dir + "command-r-v01/config.json").tied_embeddings);
  EXPECT_TRUE(io::read_hf_config(dir + "olmo-2-1124-7b/config.json").qk_norm);
  EXPECT_TRUE(io::read_hf_config(dir + "smollm3-3b/config.json").tied_embeddings);
  const auto gemma2 = io::read_hf_config(dir + "gemma-2-9b/config.json");
  EXPECT_TRUE(gemma2.tied_embeddings);  // the family's default
  EXPECT_EQ(gemma2.sliding_window, 4096);
  EXPECT_EQ(gemma2.windowed_layers(), 21);  // every other layer
  EXPECT_EQ(gemma2.attention_softcap, 50.0);
  EXPECT_EQ(gemma2.logit_softcap, 30.0);
  const auto gemma3 = io::read_hf_config(dir + "gemma-3-1b-it/config.json");
  EXPECT_EQ(gemma3.sliding_window, 512);
  EXPECT_EQ(gemma3.windowed_layers(), 22);  // 26 layers, every sixth global
  EXPECT_EQ(gemma3.sliding_window_layers[5], 6);
  const auto oss = io::read_hf_config(dir + "gpt-oss-120b/config.json");
  EXPECT_TRUE(oss.gated_mlp);
  EXPECT_TRUE(oss.attention_sinks);
  EXPECT_EQ(oss.windowed_layers(), 18);
  EXPECT_EQ(oss.sliding_window_layers[0], 0);
  const auto mistral = io::read_hf_config(dir + "mistral-7b-v0.3/config.json");
  EXPECT_EQ(mistral.windowed_layers(), 0);  // "sliding_window": null
  const auto mpt = io::read_hf_config(dir + "mpt-7b-instruct/config.json");
  EXPECT_TRUE(mpt.alibi);
  EXPECT_FALSE(mpt.biases);
  EXPECT_FALSE(mpt.dropout);
  EXPECT_EQ(mpt.ffn_hidden_size, 4 * 4096);
  const auto phi = io::read_hf_config(dir + "phi-4-mini/config.json");
  EXPECT_EQ(phi.partial_rotary, 0.75);
  const auto llama = io::read_hf_config(dir + "llama-3.1-8b/config.json");
  EXPECT_FALSE(llama.dropout);
  // StarCoder2-7B's shape: a GELU MLP with biases, tied embeddings (the family's defaults).
  const auto starcoder = io::hf_config_from_json(
      io::parse_json_text(R"({"model_type": "starcoder2", "hidden_size": 4608,
          "intermediate_size": 18432, "num_attention_heads": 36, "num_key_value_heads": 4,
          "num_hidden_layers": 32, "vocab_size": 49152, "sliding_window": 4096})",
                          "config.json"),
      "config.json");
  EXPECT_FALSE(starcoder.gated_mlp);
  EXPECT_TRUE(starcoder.biases);
  EXPECT_TRUE(starcoder.tied_embeddings);
  EXPECT_NEAR(starcoder.parameters() / 7.17e9, 1.0, 0.01);
}

TEST(HfConfig, UnknownModelTypeIsRefusedByName) {
  try {
    io::hf_config_from_json(io::parse_json_text(R"({"model_type": "mamba", "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 128,
        "vocab_size": 10})",
                                                "config.json"),
                            "config.json");
    ADD_FAILURE() << "accepted an unknown model type";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);  // a refusal of what cannot be priced: exit 2
    EXPECT_NE(std::string(e.what()).find("/model_type"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"mamba\""), std::string::npos) << e.what();
  }
}

TEST(HfConfig, BadConfigsNameTheKey) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      io::hf_config_from_json(io::parse_json_text(text, "config.json"), "config.json");
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10})",
               "\"hidden_size\", \"n_embd\", \"d_model\"");
  expect_error(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
                   "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 10})",
               "/num_key_value_heads");
  expect_error(R"({"hidden_size": -64, "num_hidden_layers": 2, "num_attention_heads": 8,
                   "intermediate_size": 128, "vocab_size": 10})",
               "/hidden_size");
  expect_error(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
                   "vocab_size": 10})",
               "\"intermediate_size\"");
  expect_error(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
                   "intermediate_size": 128, "vocab_size": 10, "num_local_experts": 4,
                   "num_experts_per_tok": 6})",
               "/num_experts_per_tok");
  expect_error("[1, 2]", "JSON object");
}

}  // namespace
}  // namespace paraplan
