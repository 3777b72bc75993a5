// Unit parsing and formatting.
#include "ir/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace paraplan {
namespace {

std::optional<double> parse_with_suffix(std::string text, bool per_second) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (per_second) {
    if (text.size() >= 2 && text.substr(text.size() - 2) == "/s") {
      text.resize(text.size() - 2);
    }
  }
  struct Unit {
    const char* suffix;
    double factor;
  };
  static const Unit units[] = {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                               {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6},
                               {"GB", 1e9}, {"TB", 1e12}, {"B", 1.0}};
  double factor = 1;
  for (const auto& u : units) {
    std::string s = u.suffix;
    if (text.size() > s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0) {
      text.resize(text.size() - s.size());
      factor = u.factor;
      break;
    }
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value * factor;
}

}  // namespace

std::optional<double> parse_bytes(const std::string& text) {
  return parse_with_suffix(text, false);
}

std::optional<double> parse_bandwidth(const std::string& text) {
  return parse_with_suffix(text, true);
}

std::optional<double> parse_flops(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == ' ') t.pop_back();
  struct Unit {
    const char* suffix;
    double factor;
  };
  static const Unit units[] = {{"PFLOP/s", 1e15}, {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9},
                               {"MFLOP/s", 1e6},  {"FLOP/s", 1.0}};
  double factor = 0;
  for (const auto& u : units) {
    std::string s = u.suffix;
    if (t.size() > s.size() && t.compare(t.size() - s.size(), s.size(), s) == 0) {
      t.resize(t.size() - s.size());
      factor = u.factor;
      break;
    }
  }
  if (factor == 0) return std::nullopt;
  while (!t.empty() && t.back() == ' ') t.pop_back();
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value * factor;
}

std::string format_bytes(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f GiB", bytes / 1073741824.0);
  return buf;
}

}  // namespace paraplan
