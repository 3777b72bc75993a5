// `paraplan validate`: the analytic cost model against measured runs (data/vtrain).
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

void add_validate_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
