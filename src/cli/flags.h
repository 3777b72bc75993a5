// Flags as the command line gives them, and their names for the API's request fields: which were
// given, the field each sets, the flag of each field and knob.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ir/training_rules.h"

namespace paraplan::cli {

/// The options given on the command line, by their long name ("--tp", "--output"; a positional
/// by its name, "INPUT"), in the order the command defines them.
std::vector<std::string> given_flags(const CLI::App& cmd);

/// The request fields the given flags set ("--cost-model" → "cost_model", "INPUT" → "input",
/// "--no-overlap-grad-reduce" → "overlap_grad_reduce"); --json and --quiet set none.
std::vector<std::string> fields_of(const std::vector<std::string>& given);
/// The flag of a request field: "cost_model" → "--cost-model", "input" → "INPUT".
std::string field_flag(const std::string& field);

/// The flag that sets a knob: "--tp", "--batch", "--stage-layers".
std::string flag_name(Knob knob);

}  // namespace paraplan::cli
