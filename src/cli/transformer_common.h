// The knob flags shared by `evaluate`, `frontier` and the transformer path of `plan`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "api/knobs.h"

namespace paraplan::cli {

using api::recompute_text;
using api::search_settings;
using api::TransformerKnobs;

/// Registers one flag per training knob of the table (ir/knobs.h) that the knobs hold, of its
/// type, range and choices (on/off knobs as --x and --no-x). `for_plan`: the help says a knob
/// is fixed against the search (plan, frontier) rather than priced as given (evaluate).
void add_transformer_knob_flags(CLI::App* cmd, api::TransformerKnobs& knobs, bool for_plan);

/// A whole-number option with the knob table's flag and range (--devices, --batch): the same in
/// every verb and in Python.
template <typename T>
CLI::Option* add_count_option(CLI::App* cmd, Knob knob, T& value, const std::string& help) {
  const KnobSpec& s = knob_spec(knob);
  return cmd->add_option(std::string(s.flag), value, help)->check(CLI::Range(s.min, s.max));
}

}  // namespace paraplan::cli
