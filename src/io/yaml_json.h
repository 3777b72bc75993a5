// YAML documents read into the same JSON tree the JSON readers check, so a cluster or a
// calibration can be written in either syntax and gets the same field-by-field messages.
#pragma once

#include <string>

#include "io/json_fields.h"

namespace paraplan::io {

/// Parses YAML text from `source`; syntax errors name the line and column (Error(kInput)).
/// Scalars become numbers when they read as one, true/false booleans, ~/null null, else strings.
Json parse_yaml_text(const std::string& text, const std::string& source);
/// A .yaml/.yml file through parse_yaml_text, anything else through parse_json_file.
Json parse_json_or_yaml_file(const std::string& path);

}  // namespace paraplan::io
