// The plan job of the pipeline planner under DAPPLE's cost model: its settings, its search and
// the products of the best plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "api/plan.h"
#include "cost/dapple_states.h"
#include "ir/error.h"
#include "ir/topology.h"
#include "ir/units.h"
#include "report/plan_report.h"
#include "search/dapple_search.h"

namespace paraplan::api {

constexpr int kDappleMaxDevices = 128;

DappleSettings dapple_settings(const Workload& w, const std::string& machines, int global_batch,
                               int microbatch_size) {
  const auto sizes = parse_machine_sizes(machines);
  if (!sizes)
    throw FieldError("machines",
                     ": expected MxD (e.g. 2x8) or devices per machine (e.g. 4,8,4), each at "
                     "least 1 and at most 65536 devices in all; got \"" +
                         machines + "\"");
  DappleSettings settings;
  settings.machine_ends = machine_ends(*sizes);
  const int devices = settings.machine_ends.back();
  if (devices > kDappleMaxDevices)
    throw FieldError(
        "machines",
        fmt::format(": the dapple cost model takes at most {} devices (its formulas describe a "
                    "few machines; its search is quadratic in the devices); got {}",
                    kDappleMaxDevices, devices));
  settings.global_batch = global_batch > 0 ? global_batch : w.model.profile_batch_size * devices;
  settings.microbatch_size = microbatch_size > 0 ? microbatch_size : 1;
  if (settings.microbatch_size > settings.global_batch)
    throw FieldError("microbatch_size",
                     fmt::format(" {} is larger than the global batch {}", settings.microbatch_size,
                                 settings.global_batch));
  return settings;
}

DapplePlanResult plan_dapple(const DapplePlanRequest& request, const std::string& source) {
  for (const auto& layer : request.model.layers)
    if (!layer.options_for(1))
      throw Error(ErrorKind::kInput, source,
                  fmt::format("layer {} has no option at tensor-parallel degree 1, which DAPPLE's "
                              "model prices",
                              layer.id));
  const DappleSettings& settings = request.settings;
  DappleCostModel cost(request.model, dapple_states(request.model), settings);
  DappleSearchResult found = search_dapple(cost);
  DapplePlanResult out;
  out.plan = std::move(found.plan);
  out.data_parallel_speedup = cost.total_compute_s() / found.data_parallel_latency_s;
  out.states = cost.states().size();
  out.states_linearised = cost.states().linearised;
  if (request.products.simulation || request.products.report)
    out.simulation = sim::simulate(sim::dapple_program(out.plan));
  if (request.products.report)
    out.report_html = report::dapple_report(
        request.model.name, out.plan, *out.simulation,
        {{"machines", request.machines},
         {"global batch", fmt::format("{} samples, micro-batch {}", settings.global_batch,
                                      settings.microbatch_size)},
         {"speedup", fmt::format("{:.4g} over one GPU; data parallelism alone {:.4g}",
                                 out.plan.as<DappleDetail>().speedup, out.data_parallel_speedup)}});
  return out;
}

}  // namespace paraplan::api
