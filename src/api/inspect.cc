// The inspect job: what paraplan reads from a model — a transformer's architecture and parameter
// counts, or an operator graph's layers — as a document and in words.
#include <fmt/format.h>

#include <algorithm>

#include "api/inputs.h"
#include "api/jobs.h"
#include "io/hf_config.h"
#include "io/onnx_reader.h"
#include "ir/error.h"
#include "zoo/llm_models.h"
#include "zoo/pase_graphs.h"

namespace paraplan::api {
namespace {

JobOutcome describe_transformer(const TransformerConfig& c, bool words) {
  JobOutcome result;
  {
    io::Json j{{"name", c.name},
               {"hidden_size", c.hidden_size},
               {"num_layers", c.num_layers},
               {"num_attention_heads", c.num_attention_heads},
               {"num_kv_heads", c.num_kv_heads},
               {"head_dim", c.head_dim},
               {"ffn_hidden_size", c.ffn_hidden_size},
               {"gated_mlp", c.gated_mlp},
               {"vocab_size", c.vocab_size},
               {"tied_embeddings", c.tied_embeddings},
               {"num_experts", c.num_experts},
               {"experts_per_token", c.experts_per_token},
               {"shared_experts", c.shared_experts},
               {"expert_ffn_hidden_size", c.expert_ffn_hidden_size},
               {"first_dense_layers", c.first_dense_layers},
               {"moe_layers", c.moe_layers()},
               {"dropout", c.dropout},
               {"biases", c.biases},
               {"attention_bias", c.attention_bias},
               {"qk_norm", c.qk_norm},
               {"attention_sinks", c.attention_sinks},
               {"alibi", c.alibi},
               {"partial_rotary", c.partial_rotary},
               {"attention_softcap", c.attention_softcap},
               {"logit_softcap", c.logit_softcap},
               {"mtp_layers", c.mtp_layers},
               {"parameters", c.parameters()},
               {"active_parameters", c.active_parameters()}};
    if (c.mla())
      j["mla"] = {{"q_lora_rank", c.q_lora_rank},
                  {"kv_lora_rank", c.kv_lora_rank},
                  {"qk_nope_head_dim", c.qk_nope_head_dim},
                  {"qk_rope_head_dim", c.qk_rope_head_dim},
                  {"v_head_dim", c.v_head_dim}};
    if (c.windowed_layers() > 0)
      j["sliding_window"] = {{"tokens", c.sliding_window}, {"layers", c.sliding_window_layers}};
    io::Json unpriced = io::Json::object();
    for (const auto& [key, why] : c.unpriced_keys) unpriced[key] = why;
    j["read_without_cost"] = unpriced;
    result.document = j;
  }
  if (!words) return result;
  std::string& out = result.words;
  out = fmt::format("{}: decoder-only transformer\n", c.name) +
        fmt::format("  layers {}, hidden {}, heads {} ({} key-value, head width {}), MLP {}{}\n",
                    c.num_layers, c.hidden_size, c.num_attention_heads, c.num_kv_heads, c.head_dim,
                    c.ffn_hidden_size, c.gated_mlp ? " (gated)" : "") +
        fmt::format("  vocabulary {}{}\n", c.vocab_size,
                    c.tied_embeddings ? " (embedding tied to the LM head)" : "");
  if (c.mla())
    out += fmt::format(
        "  multi-head latent attention: query rank {}, key-value rank {}, per head {} + {} "
        "(rotary) score and {} value dimensions\n",
        c.q_lora_rank, c.kv_lora_rank, c.qk_nope_head_dim, c.qk_rope_head_dim, c.v_head_dim);
  if (c.windowed_layers() > 0)
    out += fmt::format("  sliding window of {} tokens on {} of {} layers\n", c.sliding_window,
                       c.windowed_layers(), c.num_layers);
  if (c.attention_softcap > 0 || c.logit_softcap > 0)
    out += fmt::format("  soft-capping: attention logits {}, final logits {}\n",
                       c.attention_softcap, c.logit_softcap);
  if (c.alibi) out += "  ALiBi position biases\n";
  if (c.mtp_layers > 0)
    out += fmt::format(
        "  multi-token prediction: {} module(s), trained with the model "
        "(not in the parameter count)\n",
        c.mtp_layers);
  if (c.moe())
    out += fmt::format(
        "  mixture of experts: {} experts, top {}, {} shared, expert MLP {}, "
        "{} leading dense layers, {} MoE layers\n",
        c.num_experts, c.experts_per_token, c.shared_experts, c.expert_ffn_hidden_size,
        c.first_dense_layers, c.moe_layers());
  out += fmt::format("  parameters: {:.0f} ({:.2f} B)", c.parameters(), c.parameters() / 1e9);
  if (c.moe())
    out += fmt::format(", active per token {:.0f} ({:.2f} B)", c.active_parameters(),
                       c.active_parameters() / 1e9);
  out += "\n";
  return result;
}

JobOutcome describe_graph(const Model& m, bool words) {
  JobOutcome result;
  double flops = 0, weights = 0;
  for (const auto& l : m.layers) {
    flops += l.op->forward_flops();
    weights += l.op->weight_bytes();
  }
  {
    io::Json layers = io::Json::array();
    for (const auto& l : m.layers) {
      io::Json dims = io::Json::array();
      for (const auto& d : l.op->dims)
        dims.push_back({{"name", d.name}, {"extent", d.extent}, {"splittable", d.splittable}});
      layers.push_back({{"id", l.id},
                        {"name", l.name},
                        {"type", std::string(op_kind_name(l.op->kind))},
                        {"dims", dims},
                        {"forward_flops", l.op->forward_flops()},
                        {"weight_bytes", l.op->weight_bytes()}});
    }
    result.document = io::Json{{"name", m.name},
                               {"layers", layers},
                               {"edges", m.edges.size()},
                               {"forward_flops", flops},
                               {"weight_bytes", weights}};
  }
  if (!words) return result;
  std::string& out = result.words;
  out += fmt::format("{}: operator graph, {} layers, {} tensor flows\n", m.name, m.size(),
                     m.edges.size());
  out += fmt::format("{:>5}  {:<32} {:<20} {:>16}  {}\n", "id", "layer", "type", "forward FLOPs",
                     "iteration space");
  for (const auto& l : m.layers)
    out += fmt::format("{:>5}  {:<32} {:<20} {:>16.4g}  {}\n", l.id,
                       l.name.size() > 32 ? l.name.substr(0, 29) + "..." : l.name,
                       op_kind_name(l.op->kind), l.op->forward_flops(), l.op->dims_text());
  out +=
      fmt::format("forward FLOPs per step: {:.4g}; weights: {:.4g} bytes (fp32)\n", flops, weights);
  return result;
}

}  // namespace

JobOutcome inspect_job(const std::string& model, int batch, bool words) {
  if (model.empty())
    throw FieldError("model", ": give a built-in name or a file (config.json, .onnx)");
  check_model_name(model);
  if (auto c = zoo::llm_model(model)) return describe_transformer(*c, words);
  if (ends_with(model, ".onnx")) {
    io::OnnxOptions o;
    o.batch = batch;
    return describe_graph(io::read_onnx(model, o).model, words);
  }
  if (ends_with(model, ".json")) return describe_transformer(io::read_hf_config(model), words);
  const auto& names = zoo::pase_graph_names();
  if (std::find(names.begin(), names.end(), model) == names.end()) {
    std::string valid;
    for (const auto& n : zoo::llm_model_names()) {
      valid += valid.empty() ? "" : ", ";
      valid += n;
    }
    for (const auto& n : names) {
      valid += ", ";
      valid += n;
    }
    throw FieldError("model", ": \"" + model + "\" is neither a built-in model (" + valid +
                                  ") nor a config.json or .onnx file");
  }
  return describe_graph(zoo::pase_graph(model, batch > 0 ? batch : 128).model, words);
}

}  // namespace paraplan::api
