// The knob flags, made from the knob table (ir/knobs.h): one option per row, of the row's type,
// range and choices, setting the row's slot of the request's knobs.
#include "cli/transformer_common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <type_traits>

#include "ir/error.h"

namespace paraplan::cli {
namespace {

// The help line: plan fixes what it would search; evaluate prices the value or its default.
std::string help_of(const KnobSpec& s, bool for_plan) {
  std::string text(s.help);
  if (s.stacks != kAllStacks) text += fmt::format(" [stack {}]", fmt::join(stacks_of(s), ", "));
  if (for_plan && s.searched) return fmt::format("Transformer: {} (searched unless given)", text);
  return fmt::format("{}{} (default {})", for_plan ? "Transformer: " : "", text, s.default_text);
}

}  // namespace

void add_transformer_knob_flags(CLI::App* cmd, api::TransformerKnobs& k, bool for_plan) {
  for (const KnobSpec& s : knob_table()) {
    // plan and frontier have their own --memory, which reaches the knobs.
    if (for_plan && s.knob == Knob::kMemory) continue;
    const std::string flag(s.flag);
    const std::string help = help_of(s, for_plan);
    std::visit(
        [&](auto p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<decltype(p), std::monostate>) {
            // devices and batch: each command's own option
          } else if constexpr (std::is_same_v<T, bool>) {
            cmd->add_flag(flag, *p, help);
          } else if constexpr (std::is_same_v<T, std::string>) {
            CLI::Option* o = cmd->add_option(flag, *p, help);
            if (s.type == KnobType::kChoice) o->check(CLI::IsMember(choices_of(s)));
          } else if constexpr (std::is_same_v<T, int>) {
            if (s.type == KnobType::kOnOff) {  // --x on, --no-x off, neither: the stack's
              CLI::Option* yes = cmd->add_flag_callback(
                  flag, [p] { *p = 1; }, help);
              CLI::Option* no = cmd->add_flag_callback(
                  "--no-" + flag.substr(2), [p] { *p = 0; }, "Do not: " + std::string(s.help));
              yes->excludes(no);
            } else {
              cmd->add_option(flag, *p, help)->check(CLI::Range(s.min, s.max));
            }
          } else {
            cmd->add_option(flag, *p, help)->check(CLI::Range(s.min, s.max));
          }
        },
        api::knob_slot(k, s.knob));
  }
}

}  // namespace paraplan::cli
