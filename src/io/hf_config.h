// Hugging Face `config.json` files (GPT-2, GPT-NeoX, Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE,
// DeepSeek-V2/V3 keys) into a TransformerConfig.
#pragma once

#include <string>

#include "io/json_fields.h"
#include "ir/transformer.h"

namespace paraplan::io {

/// Error(kInput) naming the file and the key for a missing or invalid key (and the keys that
/// would be accepted instead), Error(kIo) if the file cannot be read.
TransformerConfig read_hf_config(const std::string& path);
TransformerConfig hf_config_from_json(const Json& doc, const std::string& source);

}  // namespace paraplan::io
