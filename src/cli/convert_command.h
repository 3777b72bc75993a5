// `paraplan convert`: read a model in any supported format and write paraplan's model JSON.
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

void add_convert_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
