#include "cli/flags.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/knobs.h"
#include "ir/error.h"
#include "ir/units.h"

namespace paraplan::cli {

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

std::string flag_name(Knob knob) { return std::string(knob_spec(knob).flag); }

}  // namespace paraplan::cli
