// A Python configuration function read as far as configuration code goes, without Python: the
// module's imports and functions, and one function's result as the values it sets. It follows
// what torchtitan's configuration functions and paraplan's recipes do — local assignments,
// constructor calls with keyword arguments (a class's `X(...)` or `X.Config(...)` becomes an
// object of its arguments), literals, `*`/`+`/`-` of numbers, `and`/`in` of known values,
// `config = other_function()` then `config.section.field = value` — and marks anything else
// "?" (or refuses a statement it cannot follow: if, for, with, ...). tools/torchtitan/registry.py
// applies the same rules to torchtitan's own functions.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/json_fields.h"

namespace paraplan::engines {

using io::Json;

/// A Trainer.Config's values: "training.F", "parallelism.F", "compile.F" (the fields its
/// sections' constructors and assignments set), "activation_checkpoint" (the class, or null),
/// "model_spec" (an object: model_registry's arguments, `module` its model), another field by
/// name ("set"), "call NAME" for a call made on it. Json "?" where not followed.
using ConfigRows = std::map<std::string, Json>;

struct PythonFunction {
  std::string name;
  std::string returns;  ///< the annotation as written ("Trainer.Config"; "" without)
  int line = 0;
};

class PythonConfig {
 public:
  /// Parses `text`; Error(kUsage) at "SOURCE:LINE" for what is not Python it can tokenize.
  PythonConfig(const std::string& text, std::string source);
  ~PythonConfig();
  PythonConfig(const PythonConfig&) = delete;
  PythonConfig& operator=(const PythonConfig&) = delete;

  const std::vector<PythonFunction>& functions() const;
  /// "local name" → the dotted path it was imported from
  /// ("torchtitan.models.llama3.model_registry").
  const std::map<std::string, std::string>& imports() const;

  /// The rows of function `name`. `outside(path)` gives the rows of a configuration function
  /// imported from another module (its dotted path), or nullopt when it is not one. Error(kUsage)
  /// at SOURCE:LINE for a statement it cannot follow.
  ConfigRows rows(
      const std::string& name,
      const std::function<std::optional<ConfigRows>(const std::string&)>& outside) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Sets `key` to `value` in `rows` as an assignment `config.KEY = VALUE` does (a whole section
/// replaced; a checkpointing object kept as its class).
void assign_config_row(ConfigRows& rows, const std::string& key, const Json& value);

}  // namespace paraplan::engines
