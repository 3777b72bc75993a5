// Human-readable rendering of plans for the terminal.
#pragma once

#include <string>

#include "ir/model.h"
#include "ir/plan.h"

namespace paraplan::cli {

/// A table: one row per stage (layers, d, t, options, time, memory, devices) and a summary.
std::string plan_table(const Plan& plan, const Model& model, const std::string& objective_unit);

}  // namespace paraplan::cli
