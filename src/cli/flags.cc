#include "cli/flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/units.h"

namespace paraplan::cli {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::kUsage, "", message); }

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? (names.size() > 2 ? ", and " : " and ") : ", ";
    out += names[i];
  }
  return out;
}

bool bare_number(const std::string& text) {
  char* end = nullptr;
  (void)std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

}  // namespace

std::vector<std::string> given_flags(const CLI::App& cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->count() == 0) continue;
    const auto& longs = o->get_lnames();
    if (!longs.empty())
      out.push_back("--" + longs.front());
    else if (!o->get_name().empty() && o->get_name().front() != '-')
      out.push_back(o->get_name());
  }
  return out;
}

void refuse_other_flags(const std::vector<std::string>& given,
                        const std::vector<std::string>& allowed, const std::string& what) {
  std::vector<std::string> refused;
  for (const auto& g : given)
    if (g != "--help" && std::find(allowed.begin(), allowed.end(), g) == allowed.end())
      refused.push_back(g);
  if (refused.empty()) return;
  std::vector<std::string> takes;
  for (const auto& a : allowed)
    if (a.rfind("--", 0) == 0 && std::find(takes.begin(), takes.end(), a) == takes.end())
      takes.push_back(a);
  usage(fmt::format("{} {} not apply to {}, which takes {}", listed(refused),
                    refused.size() == 1 ? "does" : "do", what, listed(takes)));
}

std::string flag_name(Knob knob) {
  switch (knob) {
    case Knob::kGlobalBatch:
      return "--batch";
    case Knob::kMicroBatch:
      return "--micro-batch";
    case Knob::kSeqLen:
      return "--seq-len";
    case Knob::kSequenceParallel:
      return "--sequence-parallel";
    case Knob::kStageLayers:
      return "--stage-layers";
    case Knob::kMoeCapacityFactor:
      return "--moe-capacity-factor";
    default:
      return "--" + std::string(knob_field(knob));  // --tp, --cp, --zero, --devices, ...
  }
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double bytes_flag(const std::string& flag, const std::string& text) {
  const auto v = parse_bytes(text);
  if (!v || !(*v > 0) || !std::isfinite(*v))
    usage(
        fmt::format("{}: expected a positive size such as 8GiB (2^30 bytes), 80GB (10^9 bytes) "
                    "or a number of bytes, got \"{}\"",
                    flag, text));
  return *v;
}

double bandwidth_flag(const std::string& flag, const std::string& text) {
  if (bare_number(text))
    usage(
        fmt::format("{} {}: give the unit, e.g. {}GB/s (10^9 bytes/s) or {}GiB/s (2^30 bytes/s); "
                    "a bare number is ambiguous",
                    flag, text, text, text));
  const auto v = parse_bandwidth(text);
  if (!v || !(*v > 0) || !std::isfinite(*v))
    usage(
        fmt::format("{}: expected a positive rate with its unit such as 25GB/s, 25GiB/s or "
                    "3e9B/s, got \"{}\"",
                    flag, text));
  return *v;
}

double flops_flag(const std::string& flag, const std::string& text) {
  if (bare_number(text))
    usage(fmt::format("{} {}: give the unit, e.g. {}TFLOP/s", flag, text, text));
  const auto v = parse_flops(text);
  if (!v || !(*v > 0) || !std::isfinite(*v))
    usage(
        fmt::format("{}: expected a positive rate with its unit such as 312TFLOP/s or "
                    "1e13FLOP/s, got \"{}\"",
                    flag, text));
  return *v;
}

}  // namespace paraplan::cli
