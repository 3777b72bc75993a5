// The models torchtitan builds by name and flavor ([model] name, flavor) that paraplan prices,
// from torchtitan 238fa99's own model arguments: llama3's, deepseek_v3's debug model and 16B,
// qwen3's. The torchtitan job reader names its model by them, and its writer finds the flavor
// a model is (by its built-in name or its shape).
#pragma once

#include <string>

#include "ir/transformer.h"

namespace paraplan::engines {

struct TorchtitanFlavor {
  const char* name;     ///< torchtitan's model name ("llama3")
  const char* flavor;   ///< its flavor ("8B", "debugmodel")
  const char* builtin;  ///< paraplan's built-in of this shape, or null
  const char* shape;    ///< else the shape, as a Hugging Face config.json
  /// torchtitan b5bcd76's configuration function of this flavor (config_registry.py: "llama3_8b"),
  /// or null where it has none; its model_registry builds the same shape.
  const char* baseline = nullptr;
};

/// The flavor torchtitan 238fa99 builds under this name and flavor; null: none paraplan knows.
const TorchtitanFlavor* find_torchtitan_flavor(const std::string& name, const std::string& flavor);

/// A flavor's model when it is not a built-in, named torchtitan-NAME-FLAVOR.
TransformerConfig torchtitan_flavor_model(const TorchtitanFlavor& flavor);

/// The flavor a model is: by its built-in's or flavor model's name, or by its shape; null: none.
const TorchtitanFlavor* torchtitan_flavor_of(const TransformerConfig& model);

}  // namespace paraplan::engines
