// Megatron-Bridge launches: every override of every export of a matrix of plans checked against
// the ConfigContainer's fields at Bridge 067f987 (data/megatron-bridge, made from its source:
// the field exists, the value has the field's type), and read back as the same plan.
#include "engines/megatron_bridge.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engines/engine_export.h"
#include "engines/megatron_bridge_recipes.h"
#include "engines/megatron_layout.h"
#include "engines/shell_script.h"
#include "ir/engine_rules.h"
#include "ir/error.h"
#include "zoo/llm_models.h"

namespace paraplan::engines {
namespace {

struct Fields {
  std::map<std::string, std::string> annotation;       // "section.field" → its annotation
  std::map<std::string, std::set<std::string>> names;  // "mixed_precision" → recipe names
};

const Fields& bridge_fields() {
  static const Fields fields = [] {
    Fields f;
    std::ifstream in(std::string(PARAPLAN_DATA) + "/megatron-bridge/fields-067f987.tsv");
    EXPECT_TRUE(in) << "data/megatron-bridge/fields-067f987.tsv";
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream cols(line);
      std::string section, field, annotation;
      std::getline(cols, section, '\t');
      std::getline(cols, field, '\t');
      std::getline(cols, annotation, '\t');
      if (section.rfind("# ", 0) == 0) continue;
      if (section.rfind('#', 0) == 0) {
        f.names[section.substr(1)].insert(field);
        continue;
      }
      f.annotation[section.empty() ? field : section + "." + field] = annotation;
    }
    return f;
  }();
  return fields;
}

std::string unquoted(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.substr(1, v.size() - 2);
  return v;
}

// What a field of this annotation takes: an empty string, or why `value` is not that.
std::string bridge_type_error(const std::string& key, const std::string& annotation,
                              const std::string& raw) {
  const std::string value = unquoted(raw);
  const bool optional = annotation.find("Optional") != std::string::npos ||
                        annotation.find("None") != std::string::npos;
  if (value == "null") return optional ? "" : "null for a field that is not Optional";
  auto is_int = [](const std::string& v) {
    return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
  };
  const std::string leaf = key.substr(key.rfind('.') + 1);
  if (leaf == "activation_func" || key == "mixed_precision") {
    const auto& names = bridge_fields().names.at(leaf);
    return names.count(value) ? "" : "not a name Bridge registers";
  }
  if (annotation.rfind("Literal[", 0) == 0 || annotation.find("Literal[") != std::string::npos)
    return annotation.find("'" + value + "'") != std::string::npos ? "" : "not one of the Literal";
  if (annotation == "AttnBackend")
    return std::set<std::string>{"flash", "fused", "unfused", "local", "auto"}.count(value)
               ? ""
               : "not an AttnBackend";
  if (annotation == "bool") return value == "true" || value == "false" ? "" : "not a bool";
  // A dtype override: one of the names Bridge's str_to_dtype resolves (utils/activation_map.py's
  // DTYPE_MAP at 067f987).
  if (annotation == "torch.dtype")
    return std::set<std::string>{"fp32",     "float32", "fp16",          "float16",    "bf16",
                                 "bfloat16", "fp8",     "float8_e4m3fn", "float8_e5m2"}
                   .count(value)
               ? ""
               : "not a dtype name Bridge resolves";
  if (annotation.find("List[int]") != std::string::npos && value.front() == '[') return "";
  if (annotation.find("float") != std::string::npos)
    return value.find('.') != std::string::npos &&
                   value.find_first_not_of("0123456789.") == std::string::npos
               ? ""
               : "not a float as Python writes one";
  if (annotation.find("int") != std::string::npos) return is_int(value) ? "" : "not an int";
  if (annotation.find("str") != std::string::npos) return "";
  return "a value of a type the test does not know: " + annotation;
}

// The overrides after run_recipe.py, as bash hands them over.
std::vector<std::pair<std::string, std::string>> overrides_of(const std::string& script) {
  const auto launch = launch_command(script, "export");
  EXPECT_TRUE(launch.has_value()) << script;
  std::vector<std::pair<std::string, std::string>> out;
  bool after = false;
  for (const ShellWord& w : launch->words) {
    if (w.text.find("run_recipe.py") != std::string::npos) after = true;
    if (!after || w.text.rfind("-", 0) == 0) continue;
    if (const std::size_t eq = w.text.find('='); eq != std::string::npos)
      out.emplace_back(w.text.substr(0, eq), w.text.substr(eq + 1));
  }
  return out;
}

struct BridgeCase {
  std::string name, model;
  TrainingConfig t;
};

std::vector<BridgeCase> bridge_matrix() {
  std::vector<BridgeCase> cases;
  TrainingConfig t;  // the default: Llama 3 8B on two nodes
  t.seq_len = 8192, t.global_batch = 512, t.micro_batch = 1, t.tp = 2, t.dp = 8;
  t.sequence_parallel = true, t.recompute = Recompute::kSelective, t.zero_stage = 1;
  t.overlap_grad_reduce = t.overlap_param_gather = t.tp_comm_overlap = true;
  cases.push_back({"default", "llama3-8b", t});
  TrainingConfig pp6 = t;  // llama3-70b at pp 6: uneven stages as a layout
  pp6.tp = 8, pp6.pp = 6, pp6.dp = 2, pp6.stage_layers = {14, 14, 13, 13, 13, 13};
  pp6.recompute = Recompute::kFull, pp6.recompute_layers = 2;
  cases.push_back({"pp6", "llama3-70b", pp6});
  TrainingConfig moe = t;  // Mixtral with experts over 8 ranks, experts whole, token dropping
  moe.tp = 2, moe.ep = 8, moe.etp = 1, moe.dp = 8, moe.moe_capacity_factor = 1.25;
  cases.push_back({"moe", "mixtral-8x7b", moe});
  TrainingConfig dense_first = moe;  // leading dense layers: the MoE pattern as a list
  dense_first.pp = 4, dense_first.tp = 8, dense_first.ep = 8, dense_first.dp = 8;
  dense_first.etp = 0, dense_first.moe_capacity_factor = 0;
  cases.push_back({"moe-dense-first", "deepseek-v3-like", dense_first});
  TrainingConfig fp8 = t;
  fp8.fp8 = fp8.fp8_param_gather = true;
  cases.push_back({"fp8", "llama3-8b", fp8});
  TrainingConfig gpt3 = t;  // GPT-3 175B on 1,024, interleaved, sends overlapped
  gpt3.seq_len = 2048, gpt3.global_batch = 1536, gpt3.tp = 8, gpt3.pp = 16, gpt3.vpp = 6;
  gpt3.dp = 8, gpt3.overlap_p2p_comm = true, gpt3.recompute = Recompute::kNone;
  cases.push_back({"gpt3", "gpt3-175b", gpt3});
  TrainingConfig cp = t;  // long context
  cp.seq_len = 131072, cp.cp = 8, cp.tp = 8, cp.dp = 1, cp.global_batch = 8;
  cp.recompute = Recompute::kFull;
  cases.push_back({"long-context", "llama3-8b", cp});
  TrainingConfig plain = t;  // ZeRO 0, nothing overlapped, standard attention, dropout
  plain.tp = 1, plain.dp = 16, plain.sequence_parallel = false, plain.zero_stage = 0;
  plain.overlap_grad_reduce = plain.overlap_param_gather = plain.tp_comm_overlap = false;
  plain.attention = Attention::kStandard, plain.recompute = Recompute::kNone;
  cases.push_back({"plain", "llama2-7b", plain});
  TrainingConfig moments = t;  // the precision-aware optimizer's bf16 moments
  moments.optimizer_moments = OptimizerMoments::kBf16;
  cases.push_back({"bf16-moments", "llama3-8b", moments});
  TrainingConfig aware = t;  // the precision-aware optimizer with fp32 moments (Qwen3's recipes)
  aware.precision_aware_optimizer = true;
  cases.push_back({"precision-aware-fp32", "llama3-8b", aware});
  return cases;
}

TEST(MegatronBridge, EveryOverrideIsAFieldOfItsTypeAtTheCommitFollowed) {
  const Fields& fields = bridge_fields();
  ASSERT_GT(fields.annotation.size(), 500u);
  for (const BridgeCase& c : bridge_matrix()) {
    const std::string script = megatron_bridge_launch(*zoo::llm_model(c.model), c.t, 8);
    const auto overrides = overrides_of(script);
    ASSERT_GT(overrides.size(), 30u) << c.name << "\n" << script;
    std::set<std::string> seen;
    for (const auto& [key, value] : overrides) {
      EXPECT_TRUE(seen.insert(key).second) << c.name << ": " << key << " given twice";
      const auto it = fields.annotation.find(key);
      if (it == fields.annotation.end()) {
        ADD_FAILURE() << c.name << ": " << key << " is not a field at Megatron-Bridge 067f987";
        continue;
      }
      EXPECT_EQ(bridge_type_error(key, it->second, value), "")
          << c.name << ": " << key << "=" << value << " (" << it->second << ")";
    }
  }
}

TEST(MegatronBridge, ExportsReadBackAsTheSamePlan) {
  for (const BridgeCase& c : bridge_matrix()) {
    const TransformerConfig m = *zoo::llm_model(c.model);
    const std::string script = megatron_bridge_launch(m, c.t, 8);
    const LaunchConfig l = read_megatron_bridge_launch(script, c.name);
    ASSERT_TRUE(l.model) << c.name;
    EXPECT_EQ(l.world_size, c.t.devices()) << c.name;
    const TrainingConfig& r = l.training;
    EXPECT_EQ(r.tp, c.t.tp) << c.name;
    EXPECT_EQ(r.pp, c.t.pp) << c.name;
    EXPECT_EQ(r.cp, c.t.cp) << c.name;
    EXPECT_EQ(r.ep, c.t.ep) << c.name;
    EXPECT_EQ(r.etp, c.t.etp) << c.name;
    EXPECT_EQ(r.vpp, c.t.vpp) << c.name;
    EXPECT_EQ(r.micro_batch, c.t.micro_batch) << c.name;
    EXPECT_EQ(r.global_batch, c.t.global_batch) << c.name;
    EXPECT_EQ(r.seq_len, c.t.seq_len) << c.name;
    EXPECT_EQ(r.recompute, c.t.recompute) << c.name;
    EXPECT_EQ(r.recompute_layers, c.t.recompute_layers) << c.name;
    EXPECT_EQ(r.sequence_parallel, c.t.sequence_parallel) << c.name;
    EXPECT_EQ(r.zero_stage, c.t.zero_stage) << c.name;
    EXPECT_EQ(r.overlap_grad_reduce, c.t.overlap_grad_reduce) << c.name;
    EXPECT_EQ(r.overlap_param_gather, c.t.overlap_param_gather) << c.name;
    EXPECT_EQ(r.tp_comm_overlap, c.t.tp_comm_overlap) << c.name;
    if (c.t.vpp > 1) {
      EXPECT_EQ(r.overlap_p2p_comm, c.t.overlap_p2p_comm) << c.name;
    }
    EXPECT_EQ(r.fp8, c.t.fp8) << c.name;
    EXPECT_EQ(r.fp8_param_gather, c.t.fp8_param_gather) << c.name;
    EXPECT_EQ(r.optimizer_moments, c.t.optimizer_moments) << c.name;
    EXPECT_EQ(r.precision_aware_optimizer, c.t.precision_aware_optimizer) << c.name;
    EXPECT_EQ(r.attention, c.t.attention) << c.name;
    EXPECT_EQ(r.moe_capacity_factor, c.t.moe_capacity_factor) << c.name;
    EXPECT_EQ(stage_split(*l.model, r), stage_split(m, c.t)) << c.name;
    const TransformerConfig& b = *l.model;
    EXPECT_EQ(b.num_layers, m.num_layers) << c.name;
    EXPECT_EQ(b.hidden_size, m.hidden_size) << c.name;
    EXPECT_EQ(b.num_attention_heads, m.num_attention_heads) << c.name;
    EXPECT_EQ(b.num_kv_heads, m.num_kv_heads) << c.name;
    EXPECT_EQ(b.head_dim, m.head_dim) << c.name;
    EXPECT_EQ(b.ffn_hidden_size,
              m.ffn_hidden_size > 0 ? m.ffn_hidden_size : m.expert_ffn_hidden_size)
        << c.name;
    EXPECT_EQ(b.gated_mlp, m.gated_mlp) << c.name;
    EXPECT_EQ(b.vocab_size, m.vocab_size) << c.name;  // padded by the api, as Megatron-LM's
    EXPECT_EQ(l.vocab_multiple, 128) << c.name;
    EXPECT_EQ(b.tied_embeddings, m.tied_embeddings) << c.name;
    EXPECT_EQ(b.learned_positions, m.learned_positions) << c.name;
    EXPECT_EQ(b.biases, m.biases) << c.name;
    EXPECT_EQ(b.num_experts, m.num_experts) << c.name;
    EXPECT_EQ(b.experts_per_token, m.experts_per_token) << c.name;
    EXPECT_EQ(b.first_dense_layers, m.first_dense_layers) << c.name;
    EXPECT_EQ(b.moe_every, m.moe_every) << c.name;
    EXPECT_EQ(b.shared_experts > 0, m.shared_experts > 0) << c.name;
    EXPECT_EQ(b.dropout, c.t.dropout && m.dropout) << c.name;
  }
}

TEST(MegatronBridge, WhatBridgeCannotRunAsPricedIsRefusedNamingWhy) {
  TrainingConfig t;
  t.tp = 2, t.dp = 4, t.zero_stage = 1;
  TransformerConfig mla = *zoo::llm_model("deepseek-v3-like");
  mla.kv_lora_rank = 512, mla.qk_nope_head_dim = 128, mla.qk_rope_head_dim = 64;
  EXPECT_THROW(megatron_bridge_launch(mla, t, 8), FieldError);
  TrainingConfig fp8 = t;
  fp8.fp8 = true;  // bf16 weights beside their FP8 copies: no Bridge recipe keeps them so
  try {
    megatron_bridge_launch(*zoo::llm_model("llama3-8b"), fp8, 8);
    ADD_FAILURE() << "FP8 without FP8 parameters exported";
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().rule, "engine_fp8_param_gather") << e.what();
  }
  TrainingConfig bf16 = t;
  bf16.bf16_gradient_reduction = true;
  try {
    megatron_bridge_launch(*zoo::llm_model("llama3-8b"), bf16, 8);
    ADD_FAILURE() << "bf16 gradient reduction exported";
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().rule, "engine_bf16_grad_reduce") << e.what();
  }
  TrainingConfig zero3 = t;
  zero3.zero_stage = 3;
  EXPECT_THROW(megatron_bridge_launch(*zoo::llm_model("llama3-8b"), zero3, 8), RuleViolation);
}

TEST(MegatronBridge, AUsersLaunchIsReadWithEveryRefusalAtOnce) {
  // run_recipe.py's own example form: convenience options, overrides, the vanilla recipe's
  // values for the rest (its batch 32 × micro-batch 2, 1,024 tokens, the distributed optimizer).
  const std::string mine =
      "NPROC=4\n"
      "torchrun --nproc-per-node=${NPROC} scripts/training/run_recipe.py \\\n"
      "  --recipe vanilla_gpt_pretrain_1gpu_h100_bf16_config --dataset mock \\\n"
      "  -tp 2 model.num_layers=2 model.hidden_size=256 model.num_attention_heads=4 \\\n"
      "  model.activation_func=silu model.gated_linear_unit=true optimizer.lr=3e-4 \\\n"
      "  checkpoint.save=/tmp/ckpt\n";
  const LaunchConfig l = read_megatron_bridge_launch(mine, "mine.sh");
  EXPECT_EQ(l.world_size, 4);
  EXPECT_EQ(l.training.tp, 2);
  EXPECT_EQ(l.training.micro_batch, 2);
  EXPECT_EQ(l.training.global_batch, 32);
  EXPECT_EQ(l.training.seq_len, 1024);
  EXPECT_EQ(l.training.zero_stage, 1);
  EXPECT_EQ(l.model->ffn_hidden_size, 1024);
  EXPECT_TRUE(l.model->gated_mlp);
  EXPECT_EQ(l.model->vocab_size, 32000);
  const std::set<std::string> ignored(l.ignored.begin(), l.ignored.end());
  EXPECT_TRUE(ignored.count("optimizer.lr") && ignored.count("checkpoint.save"));
  // Two refusals, both named, in one message; another recipe named first.
  try {
    read_megatron_bridge_launch(
        "torchrun --nproc-per-node=8 scripts/training/run_recipe.py --recipe "
        "my_own_pretrain_config model.no_such_field=full --bogus\n",
        "theirs.sh");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(what.find("3 overrides or options refused"), std::string::npos) << what;
    EXPECT_NE(what.find("--recipe my_own_pretrain_config: not a pretraining recipe"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("theirs.sh:1: model.no_such_field"), std::string::npos) << what;
    EXPECT_NE(what.find("--bogus: not an option of run_recipe.py"), std::string::npos) << what;
  }
  EXPECT_THROW(read_megatron_bridge_launch("python train.py --lr 1\n", "x.sh"), Error);
  // Values refused beside the overrides not read, all at once.
  try {
    read_megatron_bridge_launch(
        "torchrun --nproc-per-node=8 scripts/training/run_recipe.py --recipe "
        "llama3_8b_pretrain_config model.tensor_model_parallel_size=two \\\n"
        "  model.sequence_parallel=maybe model.cuda_graph_impl=full\n",
        "theirs.sh");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "theirs.sh: 3 overrides or options refused (paraplan prices the others):\n"
              "  theirs.sh:1: model.tensor_model_parallel_size: expected an integer >= 1, got "
              "\"two\"\n"
              "  theirs.sh:2: model.sequence_parallel: expected true or false, got \"maybe\"\n"
              "  theirs.sh:2: model.cuda_graph_impl: CUDA graphs change launch overheads and "
              "memory pools paraplan does not price; expected none");
  }
}

TEST(MegatronBridge, NvidiasOwnRecipesAreReadAsTheirFunctionsSetThem) {
  // Llama 3 8B's recipe by its short name (llama3_8b_pretrain_2gpu_h100_bf16_config): cp 2,
  // 8,192 tokens, batch 512 × 1, the distributed optimizer and its overlaps; its model is Llama 3
  // 8B's Hugging Face config with the NullTokenizer's 32,000 tokens (use_tokenizer_vocab_size).
  const LaunchConfig l = read_megatron_bridge_launch(
      "torchrun --nproc-per-node=2 scripts/training/run_recipe.py --recipe "
      "llama3_8b_pretrain_config --mode pretrain --dataset mock\n",
      "nvidia.sh");
  EXPECT_FALSE(l.model.has_value());
  EXPECT_EQ(l.model_name, "meta-llama/Meta-Llama-3-8B");
  EXPECT_EQ(l.vocab_size, 32000);
  EXPECT_EQ(l.world_size, 2);
  EXPECT_EQ(l.training.cp, 2);
  EXPECT_EQ(l.training.tp, 1);
  EXPECT_EQ(l.training.seq_len, 8192);
  EXPECT_EQ(l.training.global_batch, 512);
  EXPECT_EQ(l.training.micro_batch, 1);
  EXPECT_EQ(l.training.zero_stage, 1);
  EXPECT_TRUE(l.training.overlap_grad_reduce && l.training.overlap_param_gather);
  EXPECT_EQ(l.training.recompute, Recompute::kNone);
  EXPECT_FALSE(l.training.dropout);
  // run_recipe.py's --model stem, and the launch's overrides over the recipe's values.
  const LaunchConfig o = read_megatron_bridge_launch(
      "torchrun --nproc-per-node=8 scripts/training/run_recipe.py --model llama3_70b "
      "--mode pretrain -tp 8 -cp 1 model.virtual_pipeline_model_parallel_size=null\n",
      "nvidia70.sh");
  EXPECT_EQ(o.model_name, "meta-llama/Meta-Llama-3-70B");
  EXPECT_EQ(o.training.tp, 8);
  EXPECT_EQ(o.training.pp, 4);  // the recipe's
  EXPECT_EQ(o.training.vpp, 1);
  // The model's shape is its Hugging Face config's: overriding it is refused, naming why.
  try {
    read_megatron_bridge_launch(
        "torchrun --nproc-per-node=2 scripts/training/run_recipe.py --recipe "
        "llama3_8b_pretrain_config model.num_layers=16\n",
        "shape.sh");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.num_layers: the recipe "
                                         "llama3_8b_pretrain_2gpu_h100_bf16_config builds its "
                                         "model from meta-llama/Meta-Llama-3-8B"),
              std::string::npos)
        << e.what();
  }
  // Qwen3-30B-A3B's recipe captures its router in CUDA graphs, which paraplan does not price:
  // refused, and read with them off. It asks for CommOverlapConfig(tp_comm_overlap=True) at
  // tp 1: Bridge turns the tensor-parallel overlap off there (training/comm_overlap.py), and so
  // does the reader.
  try {
    read_megatron_bridge_launch(
        "torchrun --nproc-per-node=8 --nnodes=2 scripts/training/run_recipe.py --recipe "
        "qwen3_30b_a3b_pretrain_config\n",
        "qwen.sh");
    ADD_FAILURE() << "CUDA graphs read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("qwen.sh:1: model.cuda_graph_impl: CUDA graphs"),
              std::string::npos)
        << e.what();
  }
  const LaunchConfig q = read_megatron_bridge_launch(
      "torchrun --nproc-per-node=8 --nnodes=2 scripts/training/run_recipe.py --recipe "
      "qwen3_30b_a3b_pretrain_config model.cuda_graph_impl=none\n",
      "qwen.sh");
  EXPECT_EQ(q.model_name, "Qwen/Qwen3-30B-A3B");
  EXPECT_EQ(q.training.ep, 16);
  EXPECT_FALSE(q.training.tp_comm_overlap);
  // Its bf16_mixed() with grad_reduce_in_fp32 = False reduces in bf16; its precision-aware
  // optimizer keeps fp32 moments.
  EXPECT_TRUE(q.training.bf16_gradient_reduction);
  EXPECT_EQ(q.training.optimizer_moments, OptimizerMoments::kFp32);
  EXPECT_TRUE(q.training.precision_aware_optimizer);  // 10 bytes of state a parameter
  EXPECT_EQ(optimizer_state_bytes(q.training), 10);
  // DeepSeek-V3's own MixedPrecisionConfig (bf16 weights, gradients reduced in bf16) and its
  // precision-aware optimizer with bf16 moments.
  const LaunchConfig v3 = read_megatron_bridge_launch(
      "torchrun --nproc-per-node=8 --nnodes=128 scripts/training/run_recipe.py --recipe "
      "deepseek_v3_pretrain_1024gpu_h100_bf16_config\n",
      "v3.sh");
  EXPECT_TRUE(v3.training.bf16_gradient_reduction);
  EXPECT_EQ(v3.training.optimizer_moments, OptimizerMoments::kBf16);
  EXPECT_FALSE(v3.training.fp8);
  // Moments of two dtypes, or low-precision ones without the precision-aware optimizer, are
  // refused as Megatron-Core would.
  for (const auto& [overrides, why] : std::vector<std::pair<std::string, std::string>>{
           {"optimizer.use_precision_aware_optimizer=false",
            "optimizer.exp_avg_dtype: Megatron-Core asserts it can only be fp32"},
           {"optimizer.exp_avg_sq_dtype=fp8",
            "optimizer.exp_avg_sq_dtype: paraplan prices both "
            "moments in one dtype; expected bf16"},
           {"optimizer.exp_avg_dtype=torch.half",
            "optimizer.exp_avg_dtype: paraplan prices Adam's moments in fp32, bf16 or fp8"}}) {
    try {
      read_megatron_bridge_launch(
          "torchrun --nproc-per-node=8 --nnodes=128 scripts/training/run_recipe.py --recipe "
          "deepseek_v3_pretrain_1024gpu_h100_bf16_config " +
              overrides + "\n",
          "v3.sh");
      ADD_FAILURE() << overrides;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  // GLM-4.5's recipe runs its shared expert on a side stream beside the dispatch.
  const LaunchConfig glm = read_megatron_bridge_launch(
      "torchrun --nproc-per-node=8 --nnodes=16 scripts/training/run_recipe.py --recipe "
      "glm45_355b_pretrain_128gpu_h100_bf16_config\n",
      "glm.sh");
  EXPECT_EQ(glm.model_name, "zai-org/GLM-4.5");
  EXPECT_TRUE(glm.training.moe_shared_expert_overlap);
  ASSERT_NE(find_megatron_bridge_recipe("qwen3_4b_pretrain_config"), nullptr);
  EXPECT_EQ(find_megatron_bridge_recipe("qwen3_4b_pretrain_config")->hf_id, "Qwen/Qwen3-4B");
  EXPECT_EQ(find_megatron_bridge_recipe("no_such_recipe"), nullptr);
}

// A recipe's layout built by its builder's table for its pp and vp (DeepSeek-V3's
// _get_deepseek_v3_pipeline_layout at pp 8: 8 layers a stage, the last 5 with MTP and the loss),
// and its float()/int() casts of fields it set, followed by the generator.
TEST(MegatronBridgeRecipes, LayoutsFromTheirBuildersAndCastFieldsAreFollowed) {
  const BridgeRecipe* r =
      find_megatron_bridge_recipe("deepseek_v3_pretrain_256gpu_h100_bf16_32nodes_config");
  ASSERT_NE(r, nullptr);
  std::map<std::string, std::string> values(r->values.begin(), r->values.end());
  EXPECT_EQ(values["model.rotary_base"], "10000.0");
  EXPECT_EQ(values["model.rotary_scaling_factor"], "40");
  const std::string layout = values["model.pipeline_model_parallel_layout"];
  TrainingConfig t;
  t.pp = 8;
  std::string error;
  ASSERT_TRUE(read_layout(layout, t, error)) << layout << ": " << error;
  EXPECT_EQ(t.stage_layers, (std::vector<int>{8, 8, 8, 8, 8, 8, 8, 5}));
}

// Every field a recipe sets is read, priced at its default only, or costless by name: none is
// dropped unseen (a new field at a new commit fails here until it is classified).
TEST(MegatronBridgeRecipes, EveryFieldARecipeSetsIsClassified) {
  std::set<std::string> keys;
  for (const BridgeRecipe& r : megatron_bridge_recipes())
    for (const auto& [key, value] : r.values) keys.insert(key);
  ASSERT_GT(keys.size(), 150u);
  for (const std::string& key : keys)
    EXPECT_NE(megatron_bridge_field_use(key), BridgeFieldUse::kUnknown) << key;
  EXPECT_EQ(megatron_bridge_field_use("model.hidden_size"), BridgeFieldUse::kRead);
  EXPECT_EQ(megatron_bridge_field_use("ddp.use_megatron_fsdp"), BridgeFieldUse::kAtDefault);
  EXPECT_EQ(megatron_bridge_field_use("ddp.grad_reduce_in_fp32"), BridgeFieldUse::kIgnored);
  EXPECT_EQ(megatron_bridge_field_use("model.no_such_field"), BridgeFieldUse::kUnknown);
}

// A field priced at its default only, set otherwise by the launch or by the recipe, is refused
// at its place naming why, every one at once.
TEST(MegatronBridgeRecipes, FieldsPricedAtTheirDefaultsOnlyAreRefusedOtherwise) {
  const std::string llama =
      "torchrun --nproc-per-node=2 scripts/training/run_recipe.py --recipe "
      "llama3_8b_pretrain_config";
  EXPECT_NO_THROW(read_megatron_bridge_launch(
      llama + " ddp.use_megatron_fsdp=false model.transformer_impl=transformer_engine\n", "ok.sh"));
  try {
    read_megatron_bridge_launch(llama +
                                    " \\\n  ddp.use_megatron_fsdp=true \\\n"
                                    "  optimizer.optimizer=muon model.transformer_impl=local\n",
                                "fsdp.sh");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("3 overrides or options refused"), std::string::npos) << what;
    EXPECT_NE(what.find("fsdp.sh:2: ddp.use_megatron_fsdp=true: Megatron-FSDP"), std::string::npos)
        << what;
    EXPECT_NE(what.find("fsdp.sh:3: optimizer.optimizer=muon: paraplan prices Adam's states and "
                        "step; expected adam"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("model.transformer_impl=local"), std::string::npos) << what;
  }
  // DeepSeek-V4's Muon recipe builds its own optimizer and hyper-connections by expressions.
  try {
    read_megatron_bridge_launch(
        "torchrun --nproc-per-node=8 --nnodes=4 scripts/training/run_recipe.py --recipe "
        "deepseek_v4_flash_pretrain_32gpu_h100_bf16_muon_config\n",
        "v4.sh");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("optimizer: set by an expression: the recipe builds its own optimizer"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("model.use_fused_mhc: set by an expression"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace paraplan::engines
