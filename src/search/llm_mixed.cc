#include "search/llm_mixed.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

#include "cost/analytic_stages.h"
#include "ir/error.h"
#include "search/llm.h"
#include "search/stage_split.h"

namespace paraplan {
namespace {

// Each segment's stage pricer (the segment's homogeneous model over the whole pipeline).
class MixedPricers {
 public:
  MixedPricers(const MixedAnalyticModel& model, const MixedConfig& config) {
    const int segments = static_cast<int>(config.segments.size());
    costs_.reserve(static_cast<std::size_t>(segments));
    configs_.reserve(static_cast<std::size_t>(segments));
    pricers_.reserve(static_cast<std::size_t>(segments));
    for (int s = 0; s < segments; ++s) {
      costs_.push_back(model.segment_model(config, s));
      configs_.push_back(model.segment_config(config, s));
      configs_.back().stage_layers.clear();
      pricers_.emplace_back(costs_.back(), configs_.back());
      const double boundary = model.boundary_send_extra_s(config, s);
      const int pp = config.segments[static_cast<std::size_t>(s)].pp;
      for (int k = 0; k < pp; ++k) {
        segment_of_stage_.push_back(s);
        extra_.push_back(((k == 0 && s > 0) + (k == pp - 1 && s + 1 < segments)) * boundary);
      }
    }
  }
  double stage_time(int stage, int first, int last) const {
    const int stages = static_cast<int>(segment_of_stage_.size());
    const auto i = static_cast<std::size_t>(stage);
    return pricers_[static_cast<std::size_t>(segment_of_stage_[i])].stage_time(first, last,
                                                                               stages - stage) +
           extra_[i];
  }
  int stages() const { return static_cast<int>(segment_of_stage_.size()); }
  /// No split's iteration is faster: every layer (and the embedding and head) on its fastest
  /// segment, spread evenly over the stages, paced over all micro-batches.
  double lower_bound_s(const MixedConfig& config) const {
    double layer = std::numeric_limits<double>::infinity(), ends = layer;
    for (std::size_t s = 0; s < costs_.size(); ++s) {
      const BlockCosts c = costs_[s].block_costs(configs_[s]);
      layer = std::min(layer, c.layer_s);
      ends = std::min(ends, c.embedding_s + c.head_s);
    }
    const double layers = static_cast<double>(costs_[0].model().num_layers);
    const double slowest = std::max((layers * layer + ends) / stages(), layer);
    return static_cast<double>(config.microbatches()) * slowest;
  }

 private:
  std::vector<AnalyticCostModel> costs_;
  std::vector<TrainingConfig> configs_;
  std::vector<AnalyticStagePricer> pricers_;
  std::vector<int> segment_of_stage_;
  std::vector<double> extra_;  ///< sends to another segment
};

double peak_bytes(const MixedResult& r) {
  double peak = 0;
  for (const MixedStage& st : r.stages) peak = std::max(peak, st.memory.peak_bytes);
  return peak;
}

// Strictly better only: equal candidates keep the enumeration order (stable insertion).
bool mixed_before(const MixedCandidate& a, const MixedCandidate& b) {
  if (a.result.iteration_time_s != b.result.iteration_time_s)
    return a.result.iteration_time_s < b.result.iteration_time_s;
  return peak_bytes(a.result) < peak_bytes(b.result);
}

struct MixedShape {
  int tp, dp, pp;
};

// (tp, dp, pp) using all `devices`, tp within a machine and dividing the heads; tp, then pp
// ascending.
std::vector<MixedShape> shapes(const TransformerConfig& m, int devices, int machine) {
  std::vector<MixedShape> out;
  for (int tp = 1; tp <= std::min(devices, machine); ++tp) {
    if (devices % tp || machine % tp || m.num_attention_heads % tp) continue;
    for (int pp = 1; pp <= devices / tp && pp <= static_cast<int>(m.num_layers); ++pp)
      if ((devices / tp) % pp == 0) out.push_back({tp, devices / tp / pp, pp});
  }
  return out;
}

}  // namespace

Plan mixed_plan(const MixedCandidate& candidate) {
  const MixedConfig& c = candidate.config;
  const MixedResult& r = candidate.result;
  Plan plan = Plan::of(PlanKind::kMixedTransformer);
  plan.feasible = r.fits;
  plan.objective = r.iteration_time_s;
  plan.schedule = Schedule::kOneFOneB;
  plan.microbatches = static_cast<int>(c.microbatches());
  plan.devices_used = c.devices();
  const int p = static_cast<int>(r.stages.size());
  std::vector<MemoryBreakdown> stage_memory;
  MemoryBreakdown busiest;
  for (int i = 0; i < p; ++i) {
    const MixedStage& m = r.stages[static_cast<std::size_t>(i)];
    Stage st;
    for (int l = 0; l < m.layers; ++l) st.layers.push_back(m.first_layer + l);
    st.tensor_parallel = m.tp;
    st.data_parallel = m.dp;
    st.device_ids = m.device_ids;
    st.device_type = m.device_type;
    st.inflight_microbatches = std::min(p - i, plan.microbatches);
    st.time = m.time_per_microbatch_s;
    st.compute_time = m.time_per_microbatch_s;
    st.allreduce_time = m.sync_s;
    st.optimizer_time = m.optimizer_s;
    st.memory_bytes = m.memory.peak_bytes;
    stage_memory.push_back(m.memory);
    if (i == 0 || m.memory.peak_bytes > busiest.peak_bytes) busiest = m.memory;
    plan.stages.push_back(std::move(st));
  }
  MixedTrainingPlan detail{training_figures(r, busiest), c, std::move(stage_memory)};
  detail.config.stage_layers = r.stage_layers;
  plan.detail = std::move(detail);
  return plan;
}

std::optional<std::vector<int>> balance_mixed_stages(const MixedAnalyticModel& model,
                                                     const MixedConfig& config) {
  const MixedPricers pricers(model, config);
  return min_max_split(
      static_cast<int>(model.model().num_layers), pricers.stages(),
      [&](int stage, int first, int last) { return pricers.stage_time(stage, first, last); });
}

MixedSearchResult search_llm_mixed(const MixedAnalyticModel& model, const MixedSearchSettings& s) {
  const auto start = std::chrono::steady_clock::now();
  MixedSearchResult r;
  const TransformerConfig& m = model.model();
  std::vector<int> types;
  for (std::size_t k = 0; k < model.devices_of_type().size(); ++k)
    if (!model.devices_of_type()[k].empty()) types.push_back(static_cast<int>(k));
  std::vector<std::vector<MixedShape>> shapes_of(model.devices_of_type().size());
  for (int k : types) {
    // tp stays inside one of this type's machines.
    int node = 1;
    for (int i = 0; i < model.cluster().machine_count(); ++i)
      if (model.cluster().machine_device_type[static_cast<std::size_t>(i)] == k)
        node = std::max(node, model.cluster().machine_sizes[static_cast<std::size_t>(i)]);
    shapes_of[static_cast<std::size_t>(k)] = shapes(
        m, static_cast<int>(model.devices_of_type()[static_cast<std::size_t>(k)].size()), node);
  }
  std::vector<MixedCandidate> top;
  const auto threshold = [&] {
    return top.size() < static_cast<std::size_t>(s.top_k) ? std::numeric_limits<double>::infinity()
                                                          : top.back().result.iteration_time_s;
  };
  const auto offer = [&](MixedCandidate c) {
    if (top.size() == static_cast<std::size_t>(s.top_k) && !mixed_before(c, top.back())) return;
    top.insert(std::upper_bound(top.begin(), top.end(), c, mixed_before), std::move(c));
    if (top.size() > static_cast<std::size_t>(s.top_k)) top.pop_back();
  };
  const std::size_t n = types.size();
  std::vector<int> order = types;
  do {
    // Every combination of one shape per type, in this order.
    std::vector<std::size_t> pick(n, 0);
    for (bool more = true; more;) {
      MixedConfig base;
      base.seq_len = s.seq_len;
      base.global_batch = s.global_batch;
      base.attention = s.attention;
      std::int64_t lcm = 1;
      bool any_tp = false;
      for (std::size_t i = 0; i < n; ++i) {
        const MixedShape& sh = shapes_of[static_cast<std::size_t>(order[i])][pick[i]];
        base.segments.push_back({order[i], sh.tp, sh.dp, sh.pp});
        lcm = std::lcm(lcm, static_cast<std::int64_t>(sh.dp));
        any_tp = any_tp || sh.tp > 1;
      }
      const bool fits_layers = base.stages() <= static_cast<int>(m.num_layers);
      for (std::int64_t b = lcm; fits_layers && b <= s.global_batch; b += lcm) {
        if (s.global_batch % b) continue;
        bool small = true;
        for (const MixedSegment& g : base.segments)
          small = small && b / g.dp <= s.max_replica_microbatch;
        if (!small) continue;
        for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
          for (bool sp : any_tp ? std::vector<bool>{false, true} : std::vector<bool>{false})
            for (int zero = 0; zero <= std::min(2, s.max_zero_stage); ++zero) {
              MixedConfig c = base;
              c.samples_per_microbatch = b;
              c.recompute = rc;
              c.sequence_parallel = sp;
              c.zero_stage = zero;
              try {
                model.check(c);
              } catch (const Error&) {
                continue;
              }
              const MixedPricers pricers(model, c);
              if (pricers.lower_bound_s(c) >= threshold()) {
                r.pruned += 2;
                continue;
              }
              const auto split = min_max_split(static_cast<int>(m.num_layers), pricers.stages(),
                                               [&](int stage, int first, int last) {
                                                 return pricers.stage_time(stage, first, last);
                                               });
              if (!split) {
                r.rejected_memory += 2;
                continue;
              }
              c.stage_layers = *split;
              for (bool overlap : {false, true}) {
                c.overlap_grad_reduce = overlap;
                MixedResult res = model.evaluate(c);
                ++r.evaluated;
                if (!res.fits) {
                  ++r.rejected_memory;
                  continue;
                }
                offer({c, std::move(res)});
              }
            }
      }
      // Next combination of shapes.
      more = false;
      for (std::size_t i = n; i-- > 0;) {
        if (++pick[i] < shapes_of[static_cast<std::size_t>(order[i])].size()) {
          more = true;
          break;
        }
        pick[i] = 0;
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  r.top = std::move(top);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace paraplan
