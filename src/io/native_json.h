// paraplan's own JSON formats for models, clusters and plans (docs/formats.md), each with a
// "format" name and a "version". Writers produce stable key order and round-trip exactly.
#pragma once

#include <string>

#include "io/json_fields.h"
#include "ir/cluster.h"
#include "ir/model.h"
#include "ir/plan.h"

namespace paraplan::io {

inline constexpr int kFormatVersion = 1;

Json model_to_json(const Model& model);
Model model_from_json(const Json& doc, const std::string& source);
Model read_native_model(const std::string& path);
bool looks_like_native_model(const Json& doc);

Json cluster_to_json(const Cluster& cluster);
Cluster cluster_from_json(const Json& doc, const std::string& source);
/// A paraplan-cluster document from a .json, .yaml or .yml file.
Cluster read_cluster_file(const std::string& path);

/// Plans name layers by their ids and options by their ids, so `model` is needed both ways.
Json plan_to_json(const Plan& plan, const Model& model);
Plan plan_from_json(const Json& doc, const Model& model, const std::string& source);
/// The planner a paraplan-plan document comes from: its "planner" field, or for files written
/// before the field the planner its cost model belongs to (pase: intra-op, else pipeline).
std::string plan_planner(const Json& doc);

}  // namespace paraplan::io
