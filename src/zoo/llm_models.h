// Built-in transformer architectures: the GPT family of Megatron-LM's scaling study (Narayanan et
// al., SC'21, Table 1), GPT-3 175B, Llama 2 and 3, Mixtral 8x7B and a DeepSeek-V3-like MoE.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/transformer.h"

namespace paraplan::zoo {

/// Names accepted by `llm_model`, in a stable order.
const std::vector<std::string>& llm_model_names();
std::optional<TransformerConfig> llm_model(const std::string& name);
/// A GPT of Megatron-LM's kind (biases, learned positions, tied embeddings, MLP 4 × hidden).
TransformerConfig megatron_gpt(const std::string& name, std::int64_t heads, std::int64_t hidden,
                               std::int64_t layers, std::int64_t vocab = 51200);

}  // namespace paraplan::zoo
