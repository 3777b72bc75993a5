// `paraplan simulate PLAN.json`: replay one iteration of a plan written by `plan -o` in the
// discrete-event simulator; print its figures against the analytic model's, write a trace.
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

void add_simulate_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
