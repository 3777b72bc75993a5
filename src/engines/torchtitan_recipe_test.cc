// torchtitan recipes: every name each export of a matrix of plans writes checked against what
// torchtitan b5bcd76 defines (data/torchtitan, made from its source: the configuration classes'
// fields and their types, the flavors each model_registry builds, the configuration functions,
// the datasets, the attention backends), and the rules torchtitan applies to the values replayed
// (the degrees multiply to the world size, the batch in tokens divides, experts borrow from the
// sharded ranks, every layer in one model part).
#include "engines/torchtitan_recipe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "engines/torchtitan_config.h"
#include "engines/torchtitan_flavors.h"
#include "ir/engine_rules.h"
#include "ir/error.h"
#include "zoo/llm_models.h"

namespace paraplan::engines {
namespace {

// kind → owner → name → annotation, as data/torchtitan/fields-b5bcd76.tsv lists them.
using Names = std::map<std::string, std::map<std::string, std::map<std::string, std::string>>>;

const Names& torchtitan_names() {
  static const Names names = [] {
    Names n;
    std::ifstream in(std::string(PARAPLAN_DATA) + "/torchtitan/fields-b5bcd76.tsv");
    EXPECT_TRUE(in) << "data/torchtitan/fields-b5bcd76.tsv";
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind('#', 0) == 0) continue;
      std::istringstream cols(line);
      std::string kind, owner, name, annotation;
      std::getline(cols, kind, '\t');
      std::getline(cols, owner, '\t');
      std::getline(cols, name, '\t');
      std::getline(cols, annotation, '\t');
      n[kind][owner][name] = annotation;
    }
    return n;
  }();
  return names;
}

// Why `value` is not of the field's annotation ("" when it is).
std::string titan_type_error(const std::string& owner, const std::string& field,
                             const std::string& value) {
  const auto& fields = torchtitan_names().at("field");
  if (!fields.count(owner) || !fields.at(owner).count(field)) return "no such field";
  const std::string& a = fields.at(owner).at(field);
  if (a.find("Literal[") != std::string::npos)
    return value.size() > 2 &&
                   a.find("'" + value.substr(1, value.size() - 2) + "'") != std::string::npos
               ? ""
               : "not one of " + a;
  if (a == "bool") return value == "True" || value == "False" ? "" : "not a bool";
  if (a == "int") return std::regex_match(value, std::regex("-?[0-9]+")) ? "" : "not an int";
  if (a.find("list[") == 0) return value.front() == '[' ? "" : "not a list";
  if (a.find("str") != std::string::npos) return value.front() == '"' ? "" : "not a string";
  return "";  // a configuration object: its class is checked where it is built
}

struct Checked {
  std::map<std::string, std::string> training, parallelism, compile;
  std::string model, flavor, baseline;
  std::vector<std::vector<std::string>> parts;
  int world = 0;
};

// Reads the recipe's names and values, checking each against torchtitan's.
Checked check_recipe(const std::string& script) {
  Checked c;
  const Names& n = torchtitan_names();
  std::smatch m;
  std::istringstream in(script);
  std::string line, section;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, std::regex(R"(^from torchtitan\.models\.(\w+) import)")))
      c.model = m[1];
    if (std::regex_search(
            line, m,
            std::regex(R"(^from torchtitan\.models\.(\w+)\.config_registry import (\w+)$)"))) {
      EXPECT_TRUE(n.at("registry").at(m[1]).count(m[2]))
          << m[2] << " is no configuration of " << m[1];
      c.baseline = m[2];
    }
    if (std::regex_search(line, m,
                          std::regex(R"re(model_registry\("([^"]+)", attn_backend="(\w+)")re"))) {
      c.flavor = m[1];
      EXPECT_TRUE(n.at("flavor").at(c.model).count(c.flavor)) << c.flavor;
      EXPECT_TRUE(n.at("attn_backend").at("get_attention_config").count(m[2])) << m[2];
    }
    if (std::regex_search(line, m, std::regex(R"(Float8LinearConverter\.Config\((.*)\))"))) {
      static const std::regex kwarg(R"((\w+)=([^,)]+))");
      const std::string args = m[1];
      for (std::sregex_iterator i(args.begin(), args.end(), kwarg), e; i != e; ++i)
        EXPECT_EQ(titan_type_error("Float8LinearConverter.Config", (*i)[1], (*i)[2]), "") << line;
    }
    if (std::regex_search(line, m, std::regex(R"re(DATASETS\["(\w+)"\])re"))) {
      EXPECT_TRUE(n.at("dataset").at("DATASETS").count(m[1])) << m[1];
    }
    if (std::regex_search(line, m, std::regex(R"(^    config\.training\.(\w+) = ([^ ]+))"))) {
      EXPECT_EQ(titan_type_error("TrainingConfig", m[1], m[2]), "") << line;
      c.training[m[1]] = m[2];
    } else if (std::regex_search(line, m, std::regex(R"(^    config\.(\w+) = )"))) {
      EXPECT_TRUE(n.at("field").at("Trainer.Config").count(m[1])) << line;
    }
    if (std::regex_search(line, m, std::regex(R"(= (FullAC|SelectiveAC)\.Config\(\))"))) {
      EXPECT_TRUE(n.at("class").at("activation_checkpoint").count(m[1])) << line;
    }
    if (line.find("ParallelismConfig(") != std::string::npos) section = "ParallelismConfig";
    if (line.find("CompileConfig(") != std::string::npos) section = "CompileConfig";
    if (!section.empty()) {
      auto& into = section == "ParallelismConfig" ? c.parallelism : c.compile;
      const std::string after =
          line.substr(line.find('(') == std::string::npos
                          ? 0
                          : (section == "CompileConfig" ? line.find('(') + 1 : 0));
      static const std::regex kwarg(R"re((\w+)=("[^"]*"|\[[^\]]*\]|[\w.-]+))re");
      for (std::sregex_iterator i(after.begin(), after.end(), kwarg), e; i != e; ++i) {
        EXPECT_EQ(titan_type_error(section, (*i)[1], (*i)[2]), "") << section << ": " << line;
        into[(*i)[1]] = (*i)[2];
      }
      if (std::regex_search(line, m, std::regex(R"(^            \[(.*)\],$)"))) {
        std::vector<std::string> part;
        const std::string names = m[1];
        static const std::regex quoted(R"re("([^"]+)")re");
        for (std::sregex_iterator i(names.begin(), names.end(), quoted), e; i != e; ++i)
          part.push_back((*i)[1]);
        c.parts.push_back(part);
      }
      if (line == "    )" || line.back() == ')') section.clear();
    }
    if (std::regex_search(line, m, std::regex(R"(--nnodes=(\d+) --nproc-per-node=(\d+))")))
      c.world = std::stoi(m[1]) * std::stoi(m[2]);
    if (std::regex_search(line, m, std::regex(R"(--standalone --nproc-per-node=(\d+))")))
      c.world = std::stoi(m[1]);
  }
  return c;
}

int num(const std::map<std::string, std::string>& kv, const std::string& key) {
  EXPECT_TRUE(kv.count(key)) << key;
  return kv.count(key) ? std::stoi(kv.at(key)) : 0;
}

// torchtitan's rules on the values, as its source applies them.
void check_rules(const Checked& c, const TransformerConfig& model, const TrainingConfig& t) {
  const auto& p = c.parallelism;
  const int replicate = num(p, "data_parallel_replicate_degree");
  const int shard = num(p, "data_parallel_shard_degree");
  const int tp = num(p, "tensor_parallel_degree"), cp = num(p, "context_parallel_degree");
  const int pp = num(p, "pipeline_parallel_degree"), ep = num(p, "expert_parallel_degree");
  EXPECT_EQ(replicate * shard * tp * cp * pp, c.world) << "the degrees are the world size";
  EXPECT_EQ(c.world, t.devices());
  // ParallelismConfig: efsdp = dp_shard × cp × tp ÷ ep.
  EXPECT_EQ(shard * cp * tp % ep, 0);
  // Trainer: the step's tokens divide into micro-batches × pipeline micro-batches × replicas.
  const std::int64_t mb = std::stoll(c.training.at("num_tokens_per_microbatch_per_dp_rank"));
  const std::int64_t step = std::stoll(c.training.at("num_tokens_per_train_step"));
  const std::int64_t pp_mb = pp > 1 ? num(p, "num_pp_microbatches") : 1;
  ASSERT_EQ(step % (mb * pp_mb * replicate * shard), 0);
  EXPECT_EQ(step / (mb * pp_mb * replicate * shard) * pp_mb * replicate * shard * mb,
            t.global_batch * t.seq_len);
  EXPECT_EQ(step / (mb * pp_mb * replicate * shard) * pp_mb, t.microbatches())
      << "micro-batches per step as priced";
  EXPECT_EQ(mb, t.micro_batch * t.seq_len);
  if (pp > 1) {
    ASSERT_EQ(c.parts.size(), static_cast<std::size_t>(t.pp * t.vpp));
    std::vector<std::string> all;
    for (const auto& part : c.parts) all.insert(all.end(), part.begin(), part.end());
    EXPECT_EQ(all.front(), "tok_embeddings");
    EXPECT_EQ(all.back(), "lm_head");
    EXPECT_EQ(all.size(), static_cast<std::size_t>(model.num_layers) + 3) << "every layer once";
  } else {
    EXPECT_TRUE(c.parts.empty());
  }
}

struct TitanCase {
  std::string name;
  TransformerConfig model;
  TrainingConfig t;
};

TransformerConfig flavor(const char* name, const char* f) {
  return torchtitan_flavor_model(*find_torchtitan_flavor(name, f));
}

std::vector<TitanCase> titan_matrix() {
  std::vector<TitanCase> cases;
  TrainingConfig t;  // Llama 3 8B fully sharded over 64
  t.stack = Stack::kFsdp, t.seq_len = 8192, t.global_batch = 512, t.micro_batch = 1;
  t.dp = 64, t.zero_stage = 3, t.recompute = Recompute::kSelective, t.fused_elementwise = true;
  cases.push_back({"fsdp", *zoo::llm_model("llama3-8b"), t});
  TrainingConfig pipeline = t;  // Llama 3 70B, tp 4 × pp 6 (uneven) × FSDP 2
  pipeline.tp = 4, pipeline.pp = 6, pipeline.dp = 2, pipeline.global_batch = 96;
  pipeline.sequence_parallel = true, pipeline.zero_stage = 2, pipeline.recompute = Recompute::kFull;
  cases.push_back({"pipeline", *zoo::llm_model("llama3-70b"), pipeline});
  TrainingConfig interleaved = t;  // interleaved, pure bf16, async TP
  interleaved.seq_len = 4096, interleaved.global_batch = 64, interleaved.tp = 2;
  interleaved.sequence_parallel = true, interleaved.pp = 4, interleaved.vpp = 2, interleaved.dp = 2;
  interleaved.zero_stage = 3, interleaved.bf16_gradient_reduction = true;
  interleaved.fp32_loss = false, interleaved.tp_comm_overlap = true;
  interleaved.recompute = Recompute::kNone;
  cases.push_back({"interleaved", *zoo::llm_model("llama3-8b"), interleaved});
  TrainingConfig hsdp = t;  // sharded within a node, replicated across four
  hsdp.dp = 32, hsdp.shard_group = 8, hsdp.global_batch = 128;
  cases.push_back({"hsdp", *zoo::llm_model("llama3-8b"), hsdp});
  TrainingConfig fp8 = t;  // float8 with compile, tensor parallel, long context
  fp8.fp8 = true, fp8.tp = 2, fp8.sequence_parallel = true, fp8.cp = 2, fp8.dp = 4;
  fp8.global_batch = 32, fp8.seq_len = 32768;
  cases.push_back({"fp8-cp", *zoo::llm_model("llama3-8b"), fp8});
  TrainingConfig moe = t;  // DeepSeek-V2-Lite (deepseek_v3's 16B), experts over 8
  moe.seq_len = 4096, moe.global_batch = 128, moe.dp = 16, moe.ep = 8;
  cases.push_back({"moe", flavor("deepseek_v3", "16B"), moe});
  TrainingConfig qwen = moe;
  qwen.micro_batch = 2;
  cases.push_back({"qwen3-moe", flavor("qwen3", "30B-A3B"), qwen});
  return cases;
}

TEST(TorchtitanRecipe, EveryNameIsTorchtitansAndItsRulesHold) {
  for (const TitanCase& c : titan_matrix()) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(
        rules::engine(engine_rules(Engine::kTorchtitan), c.t, static_cast<int>(c.model.num_layers)),
        std::nullopt);
    const std::string script = torchtitan_recipe(c.model, c.t, 8, true);
    const Checked checked = check_recipe(script);
    EXPECT_FALSE(checked.baseline.empty()) << script;
    EXPECT_FALSE(checked.flavor.empty()) << script;
    check_rules(checked, c.model, c.t);
  }
}

TEST(TorchtitanRecipe, WritesThePlansKnobs) {
  const std::vector<TitanCase> cases = titan_matrix();
  const std::string pipeline = torchtitan_recipe(cases[1].model, cases[1].t, 8, true);
  EXPECT_NE(pipeline.find("from torchtitan.models.llama3.config_registry import llama3_70b"),
            std::string::npos);
  EXPECT_NE(pipeline.find("            [\"tok_embeddings\", \"layers.0\""), std::string::npos)
      << pipeline;
  EXPECT_NE(pipeline.find("fsdp_reshard_after_forward=\"never\""), std::string::npos);
  EXPECT_NE(pipeline.find("config.activation_checkpoint = FullAC.Config()"), std::string::npos);
  EXPECT_NE(pipeline.find("torchrun --nnodes=6 --nproc-per-node=8"), std::string::npos);
  const std::string interleaved = torchtitan_recipe(cases[2].model, cases[2].t, 8, false);
  EXPECT_NE(interleaved.find("pipeline_parallel_schedule=\"Interleaved1F1B\""), std::string::npos);
  EXPECT_NE(interleaved.find("config.training.dtype = \"bfloat16\""), std::string::npos);
  EXPECT_NE(interleaved.find("enable_async_tensor_parallel=True"), std::string::npos);
  EXPECT_NE(interleaved.find("attn_backend=\"flex\")"), std::string::npos) << "A100: Triton";
  EXPECT_NE(interleaved.find("config.activation_checkpoint = None"), std::string::npos);
  const std::string hsdp = torchtitan_recipe(cases[3].model, cases[3].t, 8, true);
  EXPECT_NE(hsdp.find("data_parallel_replicate_degree=4,\n        data_parallel_shard_degree=8"),
            std::string::npos)
      << hsdp;
  const std::string fp8 = torchtitan_recipe(cases[4].model, cases[4].t, 8, true);
  EXPECT_NE(fp8.find("Float8LinearConverter.Config(recipe_name=\"rowwise\""), std::string::npos);
}

TEST(TorchtitanRecipe, RefusesWhatTorchtitanCannotExpressNamingWhy) {
  const std::vector<TitanCase> cases = titan_matrix();
  auto refusal = [](const TransformerConfig& model, const TrainingConfig& t) {
    try {
      torchtitan_recipe(model, t, 8, true);
    } catch (const FieldError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  TrainingConfig some = cases[1].t;  // 2 of each rank's layers recomputed
  some.recompute_layers = 2;
  EXPECT_NE(refusal(cases[1].model, some).find("checkpoints every block (FullAC) or none"),
            std::string::npos);
  TrainingConfig gather = cases[0].t;
  gather.fp8 = gather.fp8_param_gather = true;
  EXPECT_NE(refusal(cases[0].model, gather).find("no float8 all-gather"), std::string::npos);
  TrainingConfig reduce = cases[0].t;
  reduce.bf16_gradient_reduction = true;
  EXPECT_NE(refusal(cases[0].model, reduce).find("reduces gradients in float32 only"),
            std::string::npos);
  TrainingConfig eager = cases[2].t;
  eager.fused_elementwise = false;
  EXPECT_NE(refusal(cases[2].model, eager).find("torch.compile pass"), std::string::npos);
  // No configuration function: qwen3 8B has a flavor but none; Mixtral has neither.
  EXPECT_NE(refusal(flavor("qwen3", "8B"), cases[0].t).find("configuration function"),
            std::string::npos);
  EXPECT_NE(refusal(*zoo::llm_model("mixtral-8x7b"), cases[0].t).find("export it for megatron"),
            std::string::npos);
}

// Each export of the matrix read back (read_torchtitan_recipe, complete_torchtitan) is the plan.
TEST(TorchtitanRecipe, ReadsBackAsThePlan) {
  for (const TitanCase& c : titan_matrix()) {
    SCOPED_TRACE(c.name);
    const LaunchConfig l = read_torchtitan_recipe(torchtitan_recipe(c.model, c.t, 8, true), "x.sh");
    EXPECT_EQ(l.world_size, c.t.devices());
    const TrainingConfig t = complete_torchtitan(l, c.model.num_layers, l.world_size);
    EXPECT_EQ(t.tp, c.t.tp);
    EXPECT_EQ(t.pp, c.t.pp);
    EXPECT_EQ(t.cp, c.t.cp);
    EXPECT_EQ(t.dp, c.t.dp);
    EXPECT_EQ(t.ep, c.t.ep);
    EXPECT_EQ(t.vpp, c.t.vpp);
    EXPECT_EQ(t.micro_batch, c.t.micro_batch);
    EXPECT_EQ(t.global_batch, c.t.global_batch);
    EXPECT_EQ(t.seq_len, c.t.seq_len);
    EXPECT_EQ(t.recompute, c.t.recompute);
    EXPECT_EQ(t.zero_stage, c.t.zero_stage);
    EXPECT_EQ(t.shard_group == 0 ? t.dp * t.cp : t.shard_group,
              c.t.shard_group == 0 ? c.t.dp * c.t.cp : c.t.shard_group);
    EXPECT_EQ(t.fp8, c.t.fp8);
    EXPECT_EQ(t.fused_elementwise, c.t.fused_elementwise);
    EXPECT_EQ(t.tp_comm_overlap, c.t.tp_comm_overlap);
    EXPECT_EQ(t.bf16_gradient_reduction, c.t.bf16_gradient_reduction);
  }
}

std::string read_error(const std::string& text, const std::string& source) {
  try {
    read_torchtitan_recipe(text, source);
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

// Python as configuration code: what it follows (arithmetic, a section replaced whole, a local
// object read back) and where it says it cannot (the place, the reason).
TEST(TorchtitanRecipe, ReadsConfigurationCodeAndPlacesWhatItCannot) {
  const LaunchConfig l = read_torchtitan_recipe(
      "from torchtitan.config import ParallelismConfig, TrainingConfig\n"
      "from torchtitan.models.llama3.config_registry import llama3_70b\n\n"
      "def f() -> Trainer.Config:\n"
      "    \"\"\"Docstring.\"\"\"\n"
      "    config = llama3_70b()  # tp 8 there\n"
      "    config.parallelism = ParallelismConfig(pipeline_parallel_degree=2,\n"
      "                                           num_pp_microbatches=2 * (3 + 1))\n"
      "    config.training = TrainingConfig(max_context_length=4096,\n"
      "        num_tokens_per_microbatch_per_dp_rank=2 * 4096)\n"
      "    return config\n",
      "r.py");
  const TrainingConfig t = complete_torchtitan(l, 80, 16);
  EXPECT_EQ(t.tp, 1) << "the section replaced whole";
  EXPECT_EQ(t.pp, 2);
  EXPECT_EQ(t.dp, 8);
  EXPECT_EQ(t.micro_batch, 2);
  EXPECT_EQ(t.global_batch, 2 * 8 * 8);
  EXPECT_EQ(t.recompute, Recompute::kFull) << "llama3_70b's FullAC kept";
  EXPECT_NE(read_error("def f():\n    config = llama3_8b(\n", "r.py").find("r.py:"),
            std::string::npos);
  EXPECT_NE(read_error("def f():\n    x = 'open\n", "r.py").find("r.py:2"), std::string::npos);
  // The launch's counts, read as the other launches' are: a count that is not one refused at
  // its line (NGPU=8 torchrun --nproc_per_node=$NGPU expands before the assignment applies).
  const std::string train = " -m torchtitan.train --module llama3 --config llama3_8b\n";
  EXPECT_EQ(
      read_torchtitan_recipe("torchrun --nproc_per_node=8 --nnodes 2" + train, "run.sh").world_size,
      16);
  EXPECT_NE(read_error("torchrun --nproc_per_node=abc" + train, "run.sh")
                .find("run.sh:1: --nproc_per_node \"abc\": expected a count of processes"),
            std::string::npos);
  EXPECT_NE(read_error("torchrun --nnodes=1:4 --nproc_per_node=8" + train, "run.sh")
                .find("an elastic range of nodes"),
            std::string::npos);
  EXPECT_NE(read_error("NGPU=8 torchrun --nproc_per_node=$NGPU" + train, "run.sh")
                .find("run.sh:1: --nproc_per_node \"$NGPU\": expected a count"),
            std::string::npos);
  EXPECT_NE(read_error("def f():\n    for x in y:\n        pass\n", "r.py").find("('for')"),
            std::string::npos);
  EXPECT_NE(read_error("def f():\n    return make()\n", "r.py").find("does not follow"),
            std::string::npos);
  EXPECT_NE(read_error("def f():\n    pass\ndef g():\n    pass\n", "r.py").find("FILE:FUNCTION"),
            std::string::npos);
  // Bytes that are not UTF-8 in a value are shown, not thrown (found by fuzz_launch).
  EXPECT_NE(read_error("from torchtitan.models.llama3 import model_registry\n"
                       "def f():\n    return Trainer.Config(model_spec=model_registry(\"8B\", "
                       "attn_backend=\"\xff\"))\n",
                       "r.py")
                .find("model_spec.attn_backend: expected flex"),
            std::string::npos);
  // A step that does not divide into the micro-batches, said in the recipe's words.
  try {
    complete_torchtitan(
        read_torchtitan_recipe("from torchtitan.models.llama3.config_registry import llama3_8b\n"
                               "def f():\n    config = llama3_8b()\n"
                               "    config.training.num_tokens_per_train_step = 3 * 8192\n"
                               "    return config\n",
                               "r.py"),
        32, 2);
    ADD_FAILURE() << "3 sequences over 2 ranks accepted";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("training.num_tokens_per_train_step: 24576 tokens are not "
                                   "a multiple of num_tokens_per_microbatch_per_dp_rank × "
                                   "num_pp_microbatches × data-parallel ranks = 8192 × 1 × 2"),
        std::string::npos)
        << e.what();
  }
  // Every refusal at once.
  const std::string both = read_error(
      "from torchtitan.models.llama3.config_registry import llama3_8b\n"
      "def f():\n    config = llama3_8b()\n"
      "    config.training.enable_cpu_offload = True\n"
      "    config.parallelism.pipeline_parallel_schedule = \"ZBVZeroBubble\"\n"
      "    return config\n",
      "r.py");
  EXPECT_NE(both.find("2 settings refused (paraplan prices the others):"), std::string::npos)
      << both;
  EXPECT_NE(both.find("\n  training.enable_cpu_offload: "), std::string::npos) << both;
  EXPECT_NE(both.find("\n  parallelism.pipeline_parallel_schedule: "), std::string::npos) << both;
  const std::string mx = read_error(
      "from torchtitan.models.llama3.config_registry import llama3_8b_mxfp8\n"
      "def f():\n    return llama3_8b_mxfp8()\n",
      "r.py");
  EXPECT_NE(mx.find("MXFP8LinearConverter.Config is not priced"), std::string::npos) << mx;
}

}  // namespace
}  // namespace paraplan::engines
