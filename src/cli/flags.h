// Flags as the command line gives them: which were given, refusing the ones the chosen planner
// does not take, and one parser per unit kind (bytes, bytes per second, FLOP/s).
#pragma once

#include <CLI/CLI.hpp>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ir/training_rules.h"

namespace paraplan::cli {

/// The options given on the command line, by their long name ("--tp", "--output"; a positional
/// by its name, "INPUT"), in the order the command defines them.
std::vector<std::string> given_flags(const CLI::App& cmd);

/// Error(kUsage) naming every flag of `given` that is not in `allowed`: "--cost-model and
/// --format do not apply to WHAT; it takes ...". Never silently ignores a flag.
void refuse_other_flags(const std::vector<std::string>& given,
                        const std::vector<std::string>& allowed, const std::string& what);

/// The request fields the given flags set ("--cost-model" → "cost_model", "INPUT" → "input",
/// "--no-overlap-grad-reduce" → "overlap_grad_reduce"); --json and --quiet set none.
std::vector<std::string> fields_of(const std::vector<std::string>& given);
/// The flag of a request field: "cost_model" → "--cost-model", "input" → "INPUT".
std::string field_flag(const std::string& field);

/// The flag that sets a knob: "--tp", "--batch", "--stage-layers".
std::string flag_name(Knob knob);

/// `a` followed by `b`.
std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b);

/// A size: "8GiB" (2^30 bytes), "80GB" (10^9) or a number of bytes; positive. Error(kUsage)
/// naming `flag` otherwise.
double bytes_flag(const std::string& flag, const std::string& text);
/// A rate in bytes per second with its unit: "25GB/s" (10^9), "25GiB/s" (2^30), "3e9B/s";
/// positive. A bare number is refused: it read as GB/s for --bw and as bytes/s for
/// --bandwidth before both became one flag.
double bandwidth_flag(const std::string& flag, const std::string& text);
/// A compute rate with its unit: "312TFLOP/s", "1e13FLOP/s"; positive.
double flops_flag(const std::string& flag, const std::string& text);

}  // namespace paraplan::cli
