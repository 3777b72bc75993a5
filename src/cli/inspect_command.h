// `paraplan inspect`: what paraplan understood of a model — a transformer architecture with its
// parameter counts, or an operator graph with each layer's iteration space and FLOPs.
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

void add_inspect_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
