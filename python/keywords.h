// The keywords of a Python call, read once each as their type with the API's own parsers
// (sizes and rates with their units, the training knobs), for python/bindings.cc.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "ir/error.h"

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

/// The training knobs among the keywords, each read as its type.
inline api::TransformerKnobs knobs(const Keywords& k) {
  api::TransformerKnobs t;
  t.seq_len = k.integer("seq_len", 0, 1, 1 << 24);
  t.micro_batch = k.integer("micro_batch", 0, 1, 1 << 20);
  t.tp = static_cast<int>(k.integer("tp", 0, 1, 1 << 16));
  t.cp = static_cast<int>(k.integer("cp", 0, 1, 1 << 16));
  t.pp = static_cast<int>(k.integer("pp", 0, 1, 1 << 16));
  t.dp = static_cast<int>(k.integer("dp", 0, 1, 1 << 20));
  t.ep = static_cast<int>(k.integer("ep", 0, 1, 1 << 16));
  t.vpp = static_cast<int>(k.integer("vpp", 0, 1, 1 << 16));
  t.sequence_parallel = k.flag("sequence_parallel");
  t.zero = static_cast<int>(k.integer("zero", -1, 0, 3));
  if (k.has("overlap_grad_reduce")) {
    t.overlap_on = k.flag("overlap_grad_reduce");
    t.overlap_off = !t.overlap_on;
  }
  t.attention = k.text("attention");
  api::attention(t.attention);  // refuse a wrong kernel before any work
  t.moe_capacity_factor = k.number("moe_capacity_factor", 0, 1, 1024);
  t.calibration = k.text("calibration");
  t.stack = k.text("stack");
  api::stack(t.stack);  // refuse a wrong stack before any work
  for (auto [key, field] : {std::pair{"tp_comm_overlap", &t.tp_comm_overlap},
                            std::pair{"overlap_p2p_comm", &t.overlap_p2p_comm},
                            std::pair{"overlap_param_gather", &t.overlap_param_gather}})
    if (k.has(key)) *field = k.flag(key) ? 1 : 0;
  t.grad_reduce_dtype = k.text("grad_reduce_dtype");
  t.precision = k.text("precision");
  t.loss_dtype = k.text("loss_dtype");
  if (k.has("memory")) t.memory = std::to_string(static_cast<long long>(k.bytes("memory")));
  if (k.has("memory_headroom"))  // "5%", "2GiB" or bytes
    t.memory_headroom = k.is_text("memory_headroom")
                            ? k.text("memory_headroom")
                            : std::to_string(static_cast<long long>(k.bytes("memory_headroom")));
  return t;
}

/// recompute= as a number of layers or a word.
inline std::string recompute_keyword(const py::dict& kw) {
  if (!kw.contains("recompute") || kw["recompute"].is_none()) return "";
  const py::handle v = kw["recompute"];
  if (py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v))
    return std::to_string(v.cast<long long>());
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  throw FieldError("recompute", ": expected none, selective, full or a number of layers");
}

}  // namespace paraplan::python
