#include "cost/analytic_stages.h"

#include <algorithm>
#include <limits>

namespace paraplan {

AnalyticStagePricer::AnalyticStagePricer(const AnalyticCostModel& cost,
                                         const TrainingConfig& config)
    : cost_(cost),
      config_(config),
      blocks_(cost.block_costs(config)),
      layers_(static_cast<int>(cost.model().num_layers)),
      memory_limit_(cost.device_memory_bytes()) {
  config_.stage_layers.clear();
}

double AnalyticStagePricer::stage_time(int first, int last, int stages_from_here) const {
  const int n = last - first + 1;
  const bool has_embedding = first == 0, has_head = last == layers_ - 1;
  const double y = std::min<double>(stages_from_here, static_cast<double>(config_.microbatches()));
  const MemoryBreakdown mem = cost_.stage_memory(config_, blocks_, n, has_embedding, has_head, y);
  if (!(mem.peak_bytes <= memory_limit_)) return std::numeric_limits<double>::infinity();
  const double compute = n * blocks_.layer_s + (has_embedding ? blocks_.embedding_s : 0.0) +
                         (has_head ? blocks_.head_s : 0.0);
  return compute + cost_.stage_sends_s(config_, blocks_, compute);
}

}  // namespace paraplan
