// Plan tables.
#include "cli/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace paraplan::cli {
namespace {

// "3-7, 9" style list of layer ids.
std::string id_ranges(const std::vector<int>& layers, const Model& model) {
  std::vector<long long> ids;
  for (int v : layers) ids.push_back(model.layers[v].id);
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", ids[i]) : fmt::format("{}-{}", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string plan_table(const Plan& plan, const Model& model, const std::string& unit) {
  std::string out;
  out += fmt::format("model: {}   cost model: {}   schedule: {}\n", model.name, plan.cost_model,
                     plan.schedule);
  out +=
      fmt::format("{:>5}  {:<24} {:>6} {:>5} {:>3} {:>3}  {:<28} {:>14} {:>12} {:>8}\n", "stage",
                  "layers (ids)", "count", "d", "t", "y", "options", "time", "memory", "devices");
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const Stage& st = plan.stages[i];
    std::map<std::string, int> counts;
    for (std::size_t j = 0; j < st.layers.size(); ++j) {
      const auto* opts = model.layers[st.layers[j]].options_for(st.tensor_parallel);
      counts[opts ? (*opts)[st.option_index[j]].id : "?"]++;
    }
    std::string options;
    for (const auto& [id, n] : counts)
      options += fmt::format("{}{}x {}", options.empty() ? "" : ", ", n, id);
    std::string layers = id_ranges(st.layers, model);
    if (layers.size() > 24) layers = layers.substr(0, 21) + "...";
    // DAPPLE's model has no memory and no in-flight count.
    const bool has_memory = plan.cost_model != "dapple";
    std::string memory =
        has_memory ? fmt::format("{:.3f} GiB", st.memory_bytes / 1073741824.0) : "n/a";
    std::string inflight = has_memory ? std::to_string(st.inflight_microbatches) : "-";
    out += fmt::format("{:>5}  {:<24} {:>6} {:>5} {:>3} {:>3}  {:<28} {:>14.9g} {:>12} {:>8}\n", i,
                       layers, st.layers.size(), st.data_parallel, st.tensor_parallel, inflight,
                       options, st.time, memory, st.devices());
  }
  out += fmt::format("objective: {:.12g} {}\n", plan.objective, unit);
  if (plan.speedup)
    out += fmt::format("speedup: {:.12g} (vs one device running the batch)\n", *plan.speedup);
  out += fmt::format("stages: {}   micro-batches: {}   devices used: {}\n", plan.stages.size(),
                     plan.microbatches, plan.devices_used);
  return out;
}

}  // namespace paraplan::cli
