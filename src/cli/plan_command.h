// `paraplan plan`: read a model (Piper JSON, DAPPLE profile, native JSON or the built-in
// default), search the best plan under a cost model, print it.
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

/// Registers the subcommand; the callback runs it and sets `exit_code`.
void add_plan_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
