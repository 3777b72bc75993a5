#include "cli/flags.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/knobs.h"
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

std::vector<std::string> fields_of(const std::vector<std::string>& given) {
  std::vector<std::string> fields;
  for (std::string flag : given) {
    if (flag == "--json" || flag == "--quiet" || flag == "--help") continue;
    if (flag == "INPUT") flag = "input";
    if (flag.rfind("--no-", 0) == 0) flag = "--" + flag.substr(5);
    if (flag.rfind("--", 0) == 0) flag = flag.substr(2);
    std::replace(flag.begin(), flag.end(), '-', '_');
    if (std::find(fields.begin(), fields.end(), flag) == fields.end()) fields.push_back(flag);
  }
  return fields;
}

std::string field_flag(const std::string& field) {
  if (field == "input") return "INPUT";
  std::string flag = "--" + field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
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
    case Knob::kTpCommOverlap:
      return "--tp-comm-overlap";
    case Knob::kOverlapP2pComm:
      return "--overlap-p2p-comm";
    case Knob::kOverlapParamGather:
      return "--overlap-param-gather";
    case Knob::kPrecision:
      return "--precision";
    default:
      return "--" + std::string(knob_field(knob));  // --tp, --cp, --zero, --devices, ...
  }
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

namespace {

std::string field_of(const std::string& flag) {  // --memory -> memory
  std::string field = flag.substr(flag.rfind('-') == std::string::npos ? 0 : 2);
  std::replace(field.begin(), field.end(), '-', '_');
  return field;
}

}  // namespace

double bytes_flag(const std::string& flag, const std::string& text) {
  return api::bytes_value(field_of(flag), text);
}

double bandwidth_flag(const std::string& flag, const std::string& text) {
  return api::bandwidth_value(field_of(flag), text);
}

double flops_flag(const std::string& flag, const std::string& text) {
  return api::flops_value(field_of(flag), text);
}

}  // namespace paraplan::cli
