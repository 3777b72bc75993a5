// Built-in transformer architectures: the GPT family of Megatron-LM's scaling study (Narayanan et
// al., SC'21, Table 1), GPT-3 175B, Llama 2 and 3, Mixtral 8x7B and a DeepSeek-V3-like MoE.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/transformer.h"

namespace paraplan::zoo {

/// Names accepted by `llm_model`, in a stable order.
const std::vector<std::string>& llm_model_names();
/// Other names of the built-ins, each with the built-in it names: the Hugging Face ids of the
/// same architectures ("meta-llama/Llama-3.1-8B", matched without case) and their short forms
/// ("llama3.1-8b": Llama 3.1 has Llama 3's shapes; only its rotary scaling, which costs nothing,
/// differs).
const std::vector<std::pair<std::string, std::string>>& llm_model_aliases();
/// The Hugging Face id of a model's tokenizer: `name` itself when it is one ("org/model", as a
/// config.json's _name_or_path gives it), else the first Hugging Face alias of a built-in; ""
/// when none is known.
std::string hugging_face_id(const std::string& name);
/// A built-in by its name or an alias.
std::optional<TransformerConfig> llm_model(const std::string& name);
/// A GPT of Megatron-LM's kind (biases, learned positions, tied embeddings, MLP 4 × hidden).
TransformerConfig megatron_gpt(const std::string& name, std::int64_t heads, std::int64_t hidden,
                               std::int64_t layers, std::int64_t vocab = 51200);

}  // namespace paraplan::zoo
