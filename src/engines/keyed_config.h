// A configuration file read as a tree (a DeepSpeed JSON, a torchtitan TOML): typed values at
// dotted keys ("zero_optimization.stage"), each error placed at "FILE: key", and every key of a
// section sorted into read (it changes time or memory), ignored (it does not) or refused.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engines/launch_config.h"
#include "io/json_fields.h"

namespace paraplan::engines {

/// A value as written (JSON), whatever bytes its strings hold: for messages.
std::string shown(const io::Json& v);

using io::Json;

/// What a read refuses, kept as it goes on (with the default in place of each value refused) so
/// that the user sees every refusal at once, not the first.
class Refusals {
 public:
  /// `noun` names what is refused in the count ("settings", "options").
  explicit Refusals(std::string source, std::string noun = "settings")
      : source_(std::move(source)), noun_(std::move(noun)) {}
  /// One refusal at "SOURCE: key", listed as "key: why".
  void add(const std::string& key, const std::string& message) {
    refused_.push_back({source_ + ": " + key, key + ": " + message, message});
  }
  /// One refusal at a place of its own ("FILE:LINE"), listed as "place: why"; `first` lists it
  /// before the others (what makes them moot, such as a recipe not known).
  void add_at(const std::string& place, const std::string& message, bool first = false) {
    refused_.insert(first ? refused_.begin() : refused_.end(),
                    Refusal{place, place + ": " + message, message});
  }
  bool empty() const { return refused_.empty(); }
  /// Error(kUsage) naming them all: one alone at its place, several as "N settings refused
  /// (paraplan prices the others):" and one per line, in the order met. None: returns.
  void raise() const;

 private:
  struct Refusal {
    std::string place, listed, message;
  };
  std::string source_, noun_;
  std::vector<Refusal> refused_;
};

class KeyedConfig {
 public:
  /// `what` names the kind of file in messages ("a DeepSpeed configuration").
  KeyedConfig(const Json& root, std::string source, std::string what)
      : root_(root), source_(std::move(source)), what_(std::move(what)), refusals_(source_) {}

  /// Error(kUsage) at "SOURCE: key", now: for what makes the rest unreadable.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  /// Kept, and raised with the others by done(): the read goes on.
  void refuse(const std::string& key, const std::string& message) const {
    refusals_.add(key, message);
  }
  /// Every refusal at once (Refusals::raise); returns when there is none.
  void done() const { refusals_.raise(); }
  /// The value at a dotted key; null when absent, or when refused ("auto", the Hugging Face
  /// Trainer's).
  Json get(const std::string& key) const;
  bool has(const std::string& key) const { return !get(key).is_null(); }
  /// The value at `key` is "auto" (the Hugging Face Trainer fills it from its arguments).
  bool is_auto(const std::string& key) const;
  /// The typed reads: a value of the wrong type is refused and the fallback returned (an
  /// integer's at least `least`).
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
  mutable Refusals refusals_;
};

}  // namespace paraplan::engines
