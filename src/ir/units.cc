// Unit parsing and formatting.
#include "ir/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace paraplan {
namespace {

struct Unit {
  const char* suffix;
  double factor;
};

/// A non-negative finite number followed by one of `units` (checked in order), or by none when
/// `bare_factor` > 0 (then it multiplies the number).
std::optional<double> parse_with_units(std::string text, std::initializer_list<Unit> units,
                                       double bare_factor) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  double factor = bare_factor;
  for (const auto& u : units) {
    std::string s = u.suffix;
    if (text.size() > s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0) {
      text.resize(text.size() - s.size());
      factor = u.factor;
      break;
    }
  }
  if (factor <= 0) return std::nullopt;
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value * factor;
}

constexpr std::initializer_list<Unit> kByteUnits = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
    {"B", 1.0}};

}  // namespace

std::optional<double> parse_bytes(const std::string& text) {
  return parse_with_units(text, kByteUnits, 1.0);
}

std::optional<double> parse_bandwidth(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == ' ') t.pop_back();
  if (t.size() >= 2 && t.compare(t.size() - 2, 2, "/s") == 0) t.resize(t.size() - 2);
  return parse_with_units(t, kByteUnits, 1.0);
}

std::optional<double> parse_flops(const std::string& text) {
  return parse_with_units(
      text,
      {{"PFLOP/s", 1e15}, {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9}, {"MFLOP/s", 1e6}, {"FLOP/s", 1.0}},
      0);
}

std::string format_bytes(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f GiB", bytes / 1073741824.0);
  return buf;
}

}  // namespace paraplan
