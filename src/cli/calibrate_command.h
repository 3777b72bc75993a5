// `paraplan calibrate`: fit a calibration file to measured runs (vTrain's CSV format).
#pragma once

#include <CLI/CLI.hpp>

namespace paraplan::cli {

void add_calibrate_command(CLI::App& app, int& exit_code);

}  // namespace paraplan::cli
