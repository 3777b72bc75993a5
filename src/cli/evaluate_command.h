// `paraplan evaluate`: price one fixed transformer training configuration with the analytic model.
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

void add_evaluate_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
