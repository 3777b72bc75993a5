// The calibration file of the analytic cost model (docs/formats.md, "Calibration"): one device
// type's efficiencies, JSON or YAML. Every field is required, so a file never silently mixes
// its own values with compiled-in ones.
#pragma once

#include <string>

#include "io/json_fields.h"
#include "ir/calibration.h"

namespace paraplan::io {

Json calibration_to_json(const Calibration& calibration);
Calibration calibration_from_json(const Json& doc, const std::string& source);
/// .json, .yaml or .yml.
Calibration read_calibration_file(const std::string& path);

}  // namespace paraplan::io
