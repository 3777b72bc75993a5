// A configuration file read as a tree (a DeepSpeed JSON, a torchtitan TOML): typed values at
// dotted keys ("zero_optimization.stage"), each error placed at "FILE: key", and every key of a
// section sorted into read (it changes time or memory), ignored (it does not) or refused.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "engines/launch_config.h"
#include "io/json_fields.h"

namespace paraplan::engines {

using io::Json;

class KeyedConfig {
 public:
  /// `what` names the kind of file in messages ("a DeepSpeed configuration").
  KeyedConfig(const Json& root, std::string source, std::string what)
      : root_(root), source_(std::move(source)), what_(std::move(what)) {}

  /// Error(kUsage) at "SOURCE: key".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  /// The value at a dotted key; null when absent. Refuses "auto" (the Hugging Face Trainer's).
  Json get(const std::string& key) const;
  bool has(const std::string& key) const { return !get(key).is_null(); }
  /// The value at `key` is "auto" (the Hugging Face Trainer fills it from its arguments).
  bool is_auto(const std::string& key) const;
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t least) const;
  double number(const std::string& key, double fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string text(const std::string& key, const std::string& fallback) const;
  /// Each key of `section` ("" for the top) into out.read or out.ignored; another is refused.
  void classify(const std::string& section, const std::set<std::string>& read,
                const std::set<std::string>& ignored, LaunchConfig& out) const;

 private:
  const Json* find(const std::string& key) const;  ///< null when absent
  const Json& root_;
  std::string source_, what_;
};

}  // namespace paraplan::engines
