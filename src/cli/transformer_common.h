// The knob flags shared by `evaluate`, `frontier` and the transformer path of `plan`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "api/knobs.h"

namespace paraplan::cli {

using api::recompute_text;
using api::search_settings;
using api::TransformerKnobs;

/// Registers --seq-len, --micro-batch, --tp, --cp, --pp, --dp, --ep, --vpp, --recompute,
/// --sequence-parallel, --zero, --[no-]overlap-grad-reduce, --attention, --moe-capacity-factor,
/// --stage-layers and
/// --calibration.
/// `what` says whether a knob is a value (evaluate) or fixed against the search (plan).
void add_transformer_knob_flags(CLI::App* cmd, api::TransformerKnobs& knobs, bool for_plan);

}  // namespace paraplan::cli
