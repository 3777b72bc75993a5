// The keywords of a Python call, read once each as their type with the API's own parsers
// (sizes and rates with their units, the training knobs), for python/bindings.cc.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "api/knobs.h"
#include "ir/error.h"
#include "ir/knobs.h"

namespace paraplan::python {

namespace py = pybind11;

inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A rate given as a number, with its unit for the API's parser: 25e9 → "25000000000B/s".
inline std::string fmt_rate(double value, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g%s", value, unit);
  return text;
}

// The keywords of one call: refuses those the call does not take (unless `allowed` is empty),
// reads each as its type.
class Keywords {
 public:
  Keywords(const py::dict& given, const std::vector<std::string>& allowed, const std::string& what)
      : given_(given) {
    for (const auto& [key, value] : given) {
      const std::string name = py::str(key);
      if (value.is_none()) continue;
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end())
        throw FieldError(name, " does not apply to " + what + ", which takes " + joined(allowed));
    }
  }
  /// The keywords given (not None), by name: the request's `given`.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [key, value] : given_)
      if (!value.is_none()) out.push_back(py::str(key));
    return out;
  }
  bool has(const char* key) const { return given_.contains(key) && !given_[key].is_none(); }
  bool is_text(const char* key) const { return has(key) && py::isinstance<py::str>(given_[key]); }
  std::string text(const char* key, const std::string& fallback = "") const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!py::isinstance<py::str>(v)) type_error(key, "a string");
    return v.cast<std::string>();
  }
  long long integer(const char* key, long long fallback, long long lo, long long hi) const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v)) type_error(key, "an integer");
    const long long x = v.cast<long long>();
    if (x < lo || x > hi)
      throw FieldError(key, " " + std::to_string(x) + ": expected " + std::to_string(lo) + " to " +
                                std::to_string(hi));
    return x;
  }
  double number(const char* key, double fallback, double lo, double hi) const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) ||
        py::isinstance<py::bool_>(v))
      type_error(key, "a number");
    const double x = v.cast<double>();
    if (!(x >= lo && x <= hi))
      throw FieldError(key, " " + std::to_string(x) + ": expected " + std::to_string(lo) + " to " +
                                std::to_string(hi));
    return x;
  }
  bool flag(const char* key, bool fallback = false) const {
    if (!has(key)) return fallback;
    const py::handle v = given_[key];
    if (!py::isinstance<py::bool_>(v)) type_error(key, "True or False");
    return v.cast<bool>();
  }
  /// A size: a number of bytes, or a string with its unit ("8GiB").
  double bytes(const char* key) const {
    if (!has(key)) return 0;
    const py::handle v = given_[key];
    if (py::isinstance<py::str>(v)) return api::bytes_value(key, v.cast<std::string>());
    return number(key, 0, 1, 1e30);
  }
  /// A rate: bytes/s, or a string with its unit ("25GB/s").
  double rate(const char* key, bool flops) const {
    if (!has(key)) return 0;
    const py::handle v = given_[key];
    if (py::isinstance<py::str>(v))
      return flops ? api::flops_value(key, v.cast<std::string>())
                   : api::bandwidth_value(key, v.cast<std::string>());
    return number(key, 0, 1e-30, 1e30);
  }

 private:
  [[noreturn]] static void type_error(const char* key, const char* expected) {
    throw FieldError(key, std::string(": expected ") + expected);
  }
  const py::dict& given_;
};

/// {a, b, c} as "a, b or c".
inline std::string choice_words(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return out;
}

/// The training knobs among the keywords, each read as its type: one keyword per row of the
/// knob table (ir/knobs.h), with the row's range and choices — the CLI's flags take the same.
inline api::TransformerKnobs knobs(const Keywords& k) {
  api::TransformerKnobs t;
  for (const KnobSpec& s : knob_table()) {
    const std::string key(s.keyword);
    if (!k.has(key.c_str())) continue;
    const char* name = key.c_str();
    if (s.knob == Knob::kRecompute) {  // a word, or a number of layers
      std::string& slot = *std::get<std::string*>(api::knob_slot(t, s.knob));
      slot = k.is_text(name) ? k.text(name) : std::to_string(k.integer(name, 0, 1, 1 << 20));
      continue;
    }
    if (s.knob == Knob::kMemory || s.knob == Knob::kMemoryHeadroom) {  // "5%", "2GiB" or bytes
      std::string& slot = *std::get<std::string*>(api::knob_slot(t, s.knob));
      slot = k.is_text(name) ? k.text(name) : std::to_string(static_cast<long long>(k.bytes(name)));
      continue;
    }
    std::visit(
        [&](auto p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<decltype(p), std::monostate>) {
            // devices and batch: each call's own keyword
          } else if constexpr (std::is_same_v<T, bool>) {
            *p = k.flag(name);
          } else if constexpr (std::is_same_v<T, std::string>) {
            *p = k.text(name);
            if (s.type != KnobType::kChoice) return;
            const std::vector<std::string> choices = choices_of(s);
            if (std::find(choices.begin(), choices.end(), *p) == choices.end())
              throw FieldError(key, " must be " + choice_words(choices) + " (got \"" + *p + "\")");
          } else if constexpr (std::is_same_v<T, int>) {
            *p = s.type == KnobType::kOnOff
                     ? (k.flag(name) ? 1 : 0)
                     : static_cast<int>(k.integer(name, 0, static_cast<long long>(s.min),
                                                  static_cast<long long>(s.max)));
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            *p = k.integer(name, 0, static_cast<long long>(s.min), static_cast<long long>(s.max));
          } else {
            *p = k.number(name, 0, s.min, s.max);
          }
        },
        api::knob_slot(t, s.knob));
  }
  return t;
}

}  // namespace paraplan::python
