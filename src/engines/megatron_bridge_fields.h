// A Megatron-Bridge launch's fields — a recipe's values under the launch's overrides, as text
// at the line that set them — read with their types, and what they price: the vanilla GPT
// recipe's model (GPTModelProvider's defaults under the overrides) and the training (parallelism,
// batch, recomputation, overlaps, precision, the optimizer's dtypes, uneven stages), with what
// paraplan does not price refused unless at its default. engines/megatron_bridge_read finds the
// fields in the launch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engines/keyed_config.h"
#include "engines/launch_config.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::engines {

/// A field's text as the launch or the recipe gives it, and the line that gives it.
struct BridgeValue {
  std::string text;
  int line = 1;
};

/// The fields, read by key with their types; a value refused is kept with the other refusals
/// (the read goes on with the default) at "SOURCE:LINE".
class BridgeFields {
 public:
  BridgeFields(std::map<std::string, BridgeValue> v, std::string source, Refusals& refusals)
      : v_(std::move(v)), source_(std::move(source)), refusals_(refusals) {}
  bool has(const std::string& k) const { return v_.count(k) > 0; }
  void fail(const std::string& k, const std::string& what) const;
  std::string text(const std::string& k, const std::string& fallback) const;
  bool null(const std::string& k) const { return has(k) && (text(k, "") == "null"); }
  std::int64_t integer(const std::string& k, std::int64_t fallback, std::int64_t least = 1) const;
  double number(const std::string& k, double fallback) const;
  bool boolean(const std::string& k, bool fallback) const;
  std::string choice(const std::string& k, const std::string& fallback,
                     const std::vector<std::string>& valid) const;

 private:
  std::map<std::string, BridgeValue> v_;
  std::string source_;
  Refusals& refusals_;
};

/// The vanilla GPT recipe's model under the overrides.
TransformerConfig bridge_model(const BridgeFields& f, LaunchConfig& out);
/// The training the fields set; `dropout` the model's default (the vanilla recipe's 0.1, a
/// named recipe's Hugging Face model's 0).
TrainingConfig bridge_training(const BridgeFields& f, LaunchConfig& out, double dropout);

}  // namespace paraplan::engines
