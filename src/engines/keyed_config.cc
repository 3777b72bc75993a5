#include "engines/keyed_config.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/error.h"

namespace paraplan::engines {

using io::Json;

std::string shown(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

void Refusals::raise() const {
  if (refused_.empty()) return;
  if (refused_.size() == 1) throw Error(ErrorKind::kUsage, refused_[0].place, refused_[0].message);
  std::string all;
  for (const Refusal& r : refused_) all += "\n  " + r.listed;
  throw Error(
      ErrorKind::kUsage, source_,
      fmt::format("{} {} refused (paraplan prices the others):{}", refused_.size(), noun_, all));
}

void KeyedConfig::fail(const std::string& key, const std::string& message) const {
  throw Error(ErrorKind::kUsage, fmt::format("{}: {}", source_, key), message);
}

const Json* KeyedConfig::find(const std::string& key) const {
  const Json* at = &root_;
  for (std::size_t start = 0; start <= key.size();) {
    const std::size_t dot = std::min(key.find('.', start), key.size());
    const std::string part = key.substr(start, dot - start);
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &(*at)[part];
    start = dot + 1;
  }
  return at;
}

bool KeyedConfig::is_auto(const std::string& key) const {
  const Json* at = find(key);
  return at != nullptr && at->is_string() && at->get<std::string>() == "auto";
}

Json KeyedConfig::get(const std::string& key) const {
  const Json* at = find(key);
  if (at == nullptr) return nullptr;
  if (at->is_string() && at->get<std::string>() == "auto") {
    refuse(key,
           "is \"auto\" (the Hugging Face Trainer fills it from its arguments); give the value "
           "it runs with");
    return nullptr;
  }
  return *at;
}

std::int64_t KeyedConfig::integer(const std::string& key, std::int64_t fallback,
                                  std::int64_t least) const {
  const Json v = get(key);
  if (v.is_null()) return fallback;
  if (!v.is_number_integer() || v.get<std::int64_t>() < least) {
    refuse(key, fmt::format("expected an integer >= {}, got {}", least, shown(v)));
    return std::max(fallback, least);
  }
  return v.get<std::int64_t>();
}

double KeyedConfig::number(const std::string& key, double fallback) const {
  const Json v = get(key);
  if (v.is_null()) return fallback;
  if (!v.is_number()) {
    refuse(key, fmt::format("expected a number, got {}", shown(v)));
    return fallback;
  }
  return v.get<double>();
}

bool KeyedConfig::boolean(const std::string& key, bool fallback) const {
  const Json v = get(key);
  if (v.is_null()) return fallback;
  if (!v.is_boolean()) {
    refuse(key, fmt::format("expected true or false, got {}", shown(v)));
    return fallback;
  }
  return v.get<bool>();
}

std::string KeyedConfig::text(const std::string& key, const std::string& fallback) const {
  const Json v = get(key);
  if (v.is_null()) return fallback;
  if (!v.is_string()) {
    refuse(key, fmt::format("expected a string, got {}", shown(v)));
    return fallback;
  }
  return v.get<std::string>();
}

void KeyedConfig::classify(const std::string& section, const std::set<std::string>& read,
                           const std::set<std::string>& ignored, LaunchConfig& out) const {
  const Json node = section.empty() ? root_ : get(section);
  if (node.is_null()) return;
  if (!node.is_object()) {
    refuse(section, "expected a table of keys");
    return;
  }
  for (const auto& [key, value] : node.items()) {
    const std::string name = section.empty() ? key : section + "." + key;
    if (read.count(key))
      out.read.push_back(name);
    else if (ignored.count(key))
      out.ignored.push_back(name);
    else
      refuse(name, fmt::format("not a key paraplan knows in {} (a typo? keys that change time or "
                               "memory are read, the others listed as ignored)",
                               what_));
  }
}

}  // namespace paraplan::engines
