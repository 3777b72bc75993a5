// torchtitan's configuration functions (torchtitan/models/*/config_registry.py at b5bcd76) as the
// values they set, generated from its source by tools/torchtitan/registry.py: what a recipe that
// starts from one (`config = llama3_8b()`), or a launch that names one (`--module llama3
// --config llama3_70b`), inherits.
#pragma once

#include <span>

namespace paraplan::engines {

struct TorchtitanRegistryRow {
  const char* module;    ///< "llama3"
  const char* function;  ///< "llama3_70b"
  /// "training.F", "parallelism.F", "compile.F", "activation_checkpoint", "model_spec", another
  /// Trainer.Config field by name, or "call NAME" (a call the function makes on the configuration).
  const char* key;
  const char* value;  ///< JSON; "\"?\"": an expression the generator does not follow
};

/// Every row, by module, function and key.
std::span<const TorchtitanRegistryRow> torchtitan_registry_rows();

}  // namespace paraplan::engines
