// `paraplan frontier`: every non-dominated transformer plan over (iteration time, peak memory
// per device, devices used), as a table, JSON and an SVG plot.
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

void add_frontier_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
