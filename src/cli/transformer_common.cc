// Helpers of the transformer commands.
#include "cli/transformer_common.h"

#include "io/engine_export.h"
#include "io/hf_config.h"
#include "ir/error.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan::cli {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace

TransformerConfig load_transformer(const std::string& name) {
  if (auto c = zoo::llm_model(name)) return *c;
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) return io::read_hf_config(name);
  throw Error(ErrorKind::kUsage, "",
              "--model: \"" + name + "\" is neither a built-in transformer (" +
                  joined(zoo::llm_model_names()) + ") nor a config.json file");
}

Cluster load_cluster_preset(const std::string& name, int devices) {
  if (auto c = zoo::cluster_preset(name, devices)) return *c;
  throw Error(ErrorKind::kUsage, "",
              "--cluster: unknown preset \"" + name + "\" (presets: " +
                  joined(zoo::cluster_preset_names()) + ")");
}

Recompute parse_recompute(const std::string& text) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  throw Error(ErrorKind::kUsage, "",
              "--recompute must be none, selective or full (got \"" + text + "\")");
}

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

std::string engine_export(const std::string& engine, const TransformerConfig& model,
                          const TrainingConfig& config) {
  if (engine == "megatron") return io::megatron_arguments(model, config);
  if (engine == "deepspeed") return io::deepspeed_config(config).dump(2) + "\n";
  throw Error(ErrorKind::kUsage, "", "--export must be megatron or deepspeed (got \"" + engine + "\")");
}

io::Json priced_json(const TrainingConfig& t, const AnalyticResult& r, int devices) {
  const MemoryBreakdown& m = r.memory;
  return {{"iteration_time_s", r.iteration_time_s},
          {"tokens_per_s", r.tokens_per_s},
          {"tflops_per_device", r.tflops_per_device},
          {"mfu", r.mfu},
          {"fits", r.fits},
          {"memory",
           {{"peak_bytes", m.peak_bytes},
            {"weights_bytes", m.weights_bytes},
            {"gradients_bytes", m.gradients_bytes},
            {"optimizer_bytes", m.optimizer_bytes},
            {"activations_bytes", m.activations_bytes},
            {"buffers_bytes", m.buffers_bytes}}},
          {"breakdown",
           {{"pipeline_s", r.pipeline_s},
            {"bubble_s", r.bubble_s},
            {"compute_per_microbatch_s", r.compute_per_microbatch_s},
            {"tp_comm_per_microbatch_s", r.tp_comm_per_microbatch_s},
            {"pp_comm_per_microbatch_s", r.pp_comm_per_microbatch_s},
            {"dp_allreduce_s", r.dp_allreduce_s},
            {"optimizer_s", r.optimizer_s}}},
          {"config",
           {{"devices", devices},
            {"global_batch", t.global_batch},
            {"micro_batch", t.micro_batch},
            {"seq_len", t.seq_len},
            {"tp", t.tp},
            {"pp", t.pp},
            {"dp", t.dp},
            {"cp", 1},
            {"ep", 1},
            {"vpp", 1},
            {"recompute", recompute_name(t.recompute)},
            {"sequence_parallel", t.sequence_parallel},
            {"zero", t.zero_stage}}}};
}

}  // namespace paraplan::cli
