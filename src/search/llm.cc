// Exhaustive enumeration of the knob space (each evaluation is closed-form, about a
// microsecond); the layer split of a configuration is searched only when a lower bound on its
// iteration time says a split could enter the top k (branch and bound, so nothing is lost).
#include "search/llm.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>

#include "cost/analytic_stages.h"
#include "ir/error.h"
#include "ir/knobs.h"
#include "ir/training_rules.h"
#include "search/frontier.h"
#include "search/stage_split.h"

namespace paraplan {
namespace {

std::vector<int> divisors(std::int64_t n) {
  std::vector<int> d;
  for (std::int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(static_cast<int>(i));
      if (i != n / i) d.push_back(static_cast<int>(n / i));
    }
  std::sort(d.begin(), d.end());
  return d;
}

auto order_key(const LlmCandidate& c) {
  const TrainingConfig& t = c.config;
  return std::make_tuple(c.result.iteration_time_s, c.result.memory.peak_bytes, t.tp, t.cp, t.pp,
                         t.ep, t.micro_batch, t.vpp, static_cast<int>(t.recompute),
                         t.recompute_layers, t.sequence_parallel, t.zero_stage, t.shard_group,
                         t.overlap_grad_reduce, t.stage_layers);
}

bool before(const LlmCandidate& a, const LlmCandidate& b) { return order_key(a) < order_key(b); }

struct CandidateBefore {
  bool operator()(const LlmCandidate& a, const LlmCandidate& b) const { return before(a, b); }
};
using LlmFrontier = ParetoSet<LlmCandidate, CandidateBefore>;

Objectives objectives(const LlmCandidate& c) {
  return {c.result.iteration_time_s, c.result.memory.peak_bytes, c.config.devices()};
}

/// The k best candidates so far, sorted.
class TopK {
 public:
  explicit TopK(int k) : k_(static_cast<std::size_t>(k)) {}
  void offer(LlmCandidate c) {
    if (items_.size() == k_ && !before(c, items_.back())) return;
    items_.insert(std::upper_bound(items_.begin(), items_.end(), c, before), std::move(c));
    if (items_.size() > k_) items_.pop_back();
  }
  /// A configuration slower than this cannot enter.
  double threshold() const {
    return items_.size() < k_ ? std::numeric_limits<double>::infinity()
                              : items_.back().result.iteration_time_s;
  }
  std::vector<LlmCandidate> take() { return std::move(items_); }

 private:
  std::size_t k_;
  std::vector<LlmCandidate> items_;
};

template <typename T>
std::vector<T> fixed_or(const std::optional<T>& fixed, std::vector<T> searched) {
  return fixed ? std::vector<T>{*fixed} : searched;
}

}  // namespace

bool llm_candidate_before(const LlmCandidate& a, const LlmCandidate& b) { return before(a, b); }

Plan llm_plan(const LlmCandidate& c) {
  const TrainingConfig& t = c.config;
  const AnalyticResult& r = c.result;
  Plan plan = Plan::of(PlanKind::kTransformer);
  plan.feasible = r.fits;
  plan.objective = r.iteration_time_s;
  plan.schedule = t.vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
  plan.microbatches = static_cast<int>(t.microbatches());
  plan.devices_used = t.devices();
  const int p = t.pp, v = t.vpp, units = plan.microbatches * v;
  int first = 0;
  for (int i = 0; i < static_cast<int>(r.stages.size()); ++i) {
    const StageFigures& f = r.stages[static_cast<std::size_t>(i)];
    Stage st;
    for (int l = 0; l < f.layers; ++l) st.layers.push_back(first + l);
    first += f.layers;
    st.tensor_parallel = t.tp;
    st.data_parallel = t.dp;
    // Megatron-LM's warm-up plus the one in flight (interleaved: in micro-batch chunks).
    const int warmup = v > 1 ? 2 * (p - i - 1) + (v - 1) * p : p - i - 1;
    st.inflight_microbatches = std::min(warmup + 1, units);
    st.time = f.time_per_microbatch_s;
    st.memory_bytes = f.memory.peak_bytes;
    plan.stages.push_back(std::move(st));
  }
  TrainingPlan detail{training_figures(r, r.memory), t};
  detail.config.stage_layers = r.stage_layers;  // the split priced, even when implicit
  plan.detail = std::move(detail);
  return plan;
}

std::optional<std::vector<int>> balance_stages(const AnalyticCostModel& cost,
                                               const TrainingConfig& config) {
  const AnalyticStagePricer pricer(cost, config);
  const int p = config.pp;
  return min_max_split(pricer.layers(), p, [&](int stage, int first, int last) {
    return pricer.stage_time(first, last, p - stage);
  });
}

namespace {

using Clock = std::chrono::steady_clock;

// The outer shapes (tp, cp, pp) are independent tasks, each with its own top k (a configuration
// outside a task's top k is outside the overall one, so pruning stays exact).
struct Shape {
  int tp, cp, pp;
};

std::vector<Shape> outer_shapes(const TransformerConfig& m, const LlmSearchSettings& s) {
  std::vector<Shape> shapes;
  for (int tp : fixed_or(s.tp, divisors(s.devices))) {
    if (rules::tensor_parallel(m, tp) || s.devices % tp) continue;
    for (int cp : fixed_or(s.cp, divisors(s.devices / tp))) {
      if ((s.devices / tp) % cp || rules::context_parallel(s.seq_len, cp)) continue;
      for (int pp : fixed_or(s.pp, divisors(s.devices / tp / cp))) {
        if ((s.devices / tp / cp) % pp || rules::pipeline(m, pp)) continue;
        shapes.push_back({tp, cp, pp});
      }
    }
  }
  return shapes;
}

// What every shape's task shares: the clock, the time limit's stop, and the bounds.
struct SharedBounds {
  Clock::time_point start = Clock::now();
  std::atomic<bool> stop{false};
  // Every task's k-th best time bounds the overall k-th best: the smallest of them prunes all.
  std::atomic<double> threshold{std::numeric_limits<double>::infinity()};
  std::atomic<double> best_seen{std::numeric_limits<double>::infinity()};  // for progress only
};

// One shape's knobs that the rules allow, for one micro-batch size (or its expert sizes).
struct InnerKnobs {
  std::vector<int> vpps, zeros;
  std::vector<int> shards;  ///< ZeRO 3's shard groups: 0 (every rank), HSDP's node-local group
  std::vector<bool> sps, overlaps;
};

// The search of one (tp, cp, pp) shape: every inner knob, recomputation last (its fewest
// layers that fit found by bisection), each configuration with its best layer split.
class ShapeSearch {
 public:
  ShapeSearch(const AnalyticCostModel& cost, const LlmSearchSettings& s, SharedBounds& shared)
      : cost_(cost),
        m_(cost.model()),
        s_(s),
        shared_(shared),
        layers_(static_cast<int>(cost.model().num_layers)),
        top_(s.top_k) {}

  std::vector<LlmCandidate> found;  ///< the shape's top k, fastest first
  LlmFrontier frontier;
  std::int64_t evaluated = 0, rejected = 0, balanced = 0;
  /// Of the configurations that do not fit, the one with the smallest peak (ties: the faster,
  /// then the knobs' order): what the least memory per device would run.
  std::optional<LlmCandidate> leanest;

  /// Searches the shape; its top k are kept in `found` (also when the time limit stops it).
  void run(const Shape& shape);

 private:
  InnerKnobs inner_knobs(int pp, int dp, int cp, int tp, std::int64_t micro_batch) const;
  /// Prices one configuration (and its best layer split); returns whether it fits.
  bool consider(const TrainingConfig& t);
  /// The best split of a pipeline into stages, when a lower bound says it could enter the top.
  void consider_split(const TrainingConfig& t, const AnalyticResult& r, LlmCandidate& best,
                      bool& fits);
  /// The smallest number of recomputed layers per stage that fits (memory falls and time rises
  /// with it, so that one is the fastest); 0 if none short of all.
  int fewest_recomputed(TrainingConfig t);
  /// Every recomputation of `t`; false when the time limit stopped the search.
  bool recomputations(TrainingConfig t);

  const AnalyticCostModel& cost_;
  const TransformerConfig& m_;
  const LlmSearchSettings& s_;
  SharedBounds& shared_;
  const int layers_;
  TopK top_;
  std::int64_t considered_ = 0;
};

bool ShapeSearch::consider(const TrainingConfig& given) {
  // An engine that sets only the first and last stage's layers (NeMo) runs its nearest split
  // when the even one's middle stages differ.
  TrainingConfig adjusted;
  const TrainingConfig* chosen = &given;
  if (s_.engine && search_engine_rules(s_).split_first_last_only && given.pp > 2 &&
      given.stage_layers.empty())
    if (const auto split = first_last_split(layers_, given.pp);
        split && *split != even_stage_split(layers_, given.pp)) {
      adjusted = given;
      adjusted.stage_layers = *split;
      chosen = &adjusted;
    }
  // An engine that splits the layers itself (DeepSpeed's pipeline engine) runs its own split.
  if (s_.even_stages_only && given.pp > 1 && given.stage_layers.empty() && layers_ % given.pp) {
    adjusted = given;
    apply_engine_split(search_engine_rules(s_), adjusted, layers_);
    chosen = &adjusted;
  }
  const TrainingConfig& t = *chosen;
  if (s_.engine && rules::engine(search_engine_rules(s_), t, layers_))
    return false;  // its engine does not run it
  AnalyticResult r;
  try {
    r = cost_.evaluate(t);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage) throw;
    return false;  // a rule the loops do not filter (a fixed knob with a searched one)
  }
  ++evaluated;
  LlmCandidate best{t, r};
  bool fits = r.fits;
  if (s_.balance_stages && t.pp > 1 && t.vpp == 1 && t.recompute_layers == 0 &&
      t.microbatches() >= t.pp)
    consider_split(t, r, best, fits);
  if (s_.frontier && r.fits) {
    LlmCandidate cu{t, r};
    frontier.offer(objectives(cu), cu);
  }
  if (fits) {
    const double time = best.result.iteration_time_s;
    for (double seen = shared_.best_seen.load();
         time < seen && !shared_.best_seen.compare_exchange_weak(seen, time);) {
    }
    top_.offer(std::move(best));
    const double mine = top_.threshold();
    double seen = shared_.threshold.load();
    while (mine < seen && !shared_.threshold.compare_exchange_weak(seen, mine)) {
    }
  } else {
    ++rejected;
    const auto leaner = [](const LlmCandidate& a, const LlmCandidate& b) {
      if (a.result.memory.peak_bytes != b.result.memory.peak_bytes)
        return a.result.memory.peak_bytes < b.result.memory.peak_bytes;
      return llm_candidate_before(a, b);
    };
    if (!leanest || leaner(best, *leanest)) leanest = best;
  }
  if (s_.time_limit_s > 0 && (++considered_ & 63) == 0 &&
      std::chrono::duration<double>(Clock::now() - shared_.start).count() > s_.time_limit_s)
    shared_.stop = true;
  return fits;
}

void ShapeSearch::consider_split(const TrainingConfig& t, const AnalyticResult& r,
                                 LlmCandidate& best, bool& fits) {
  const double bound = cost_.time_lower_bound(t);
  const bool uniform_optimal = r.fits && r.iteration_time_s <= bound;
  if (!s_.frontier &&
      (uniform_optimal || bound >= std::min(top_.threshold(), shared_.threshold.load())))
    return;
  ++balanced;
  const auto split = balance_stages(cost_, t);
  if (!split || *split == r.stage_layers) return;
  TrainingConfig tb = t;
  tb.stage_layers = *split;
  if (s_.engine && rules::engine(search_engine_rules(s_), tb, layers_))
    return;  // a split its engine cannot express (NeMo's first and last stages only)
  AnalyticResult rb = cost_.evaluate(tb);
  ++evaluated;
  if (s_.frontier && rb.fits) {
    LlmCandidate cb{tb, rb};
    frontier.offer(objectives(cb), cb);
  }
  if (rb.fits && (!r.fits || rb.iteration_time_s < r.iteration_time_s)) {
    best = {tb, rb};
    fits = true;
  }
}

int ShapeSearch::fewest_recomputed(TrainingConfig t) {
  const std::vector<int> split = even_stage_split(layers_, t.pp);
  int lo = 1, hi = *std::min_element(split.begin(), split.end()) / t.vpp - 1;
  int found = 0;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    t.recompute_layers = mid;
    const bool fits = cost_.evaluate(t).fits;
    ++evaluated;
    if (fits) {
      found = mid;
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return found;
}

InnerKnobs ShapeSearch::inner_knobs(int pp, int dp, int cp, int tp,
                                    std::int64_t micro_batch) const {
  InnerKnobs k;
  k.vpps = {1};
  if (s_.vpp) {
    k.vpps = {*s_.vpp};
  } else if (pp > 1) {
    TrainingConfig probe;  // what the interleaving rule reads
    probe.pp = pp;
    probe.dp = dp;
    probe.global_batch = s_.global_batch;
    probe.micro_batch = micro_batch;
    for (int v = 2; v <= layers_ / pp; ++v) {
      probe.vpp = v;
      if (!rules::interleaving(m_, probe)) k.vpps.push_back(v);
    }
  }
  k.sps = {false};
  if (tp > 1 && !rules::sequence_parallel(s_.seq_len, cp, tp)) k.sps.push_back(true);
  if (s_.sequence_parallel) k.sps = {*s_.sequence_parallel};
  // What the engine shards (its rules set max_zero_stage and zero_stage_1).
  for (int z = 0; z <= s_.max_zero_stage; ++z)
    if (!rules::zero(z, pp, s_.stack, dp * cp) && (z != 1 || s_.zero_stage_1)) k.zeros.push_back(z);
  if (s_.zero_stage) k.zeros = {*s_.zero_stage};
  // Low-precision moments: Megatron-Core's precision-aware optimizer is its distributed one.
  if (s_.stack_choices.optimizer_moments.value_or(OptimizerMoments::kFp32) !=
          OptimizerMoments::kFp32 ||
      s_.stack_choices.precision_aware_optimizer.value_or(false))
    std::erase_if(k.zeros, [](int z) { return z != 1 && z != 2; });
  k.shards = {0};
  if (s_.shard_group) {  // HSDP as given: ZeRO 3 over groups that divide dp × cp
    k.zeros = (dp * cp) % *s_.shard_group == 0 &&
                      std::find(k.zeros.begin(), k.zeros.end(), 3) != k.zeros.end()
                  ? std::vector<int>{3}
                  : std::vector<int>{};
    k.shards = {*s_.shard_group < dp * cp ? *s_.shard_group : 0};
  } else if (knob_spec(Knob::kShardGroup).stacks & stack_bit(s_.stack)) {
    // HSDP within a node: the largest group of dp × cp ranks (tp · cp · pp apart) one node holds.
    const auto& sizes = cost_.cluster().machine_sizes;
    const int node = sizes.empty() ? 1 : sizes[0], apart = tp * cp * pp;
    int group = 0;
    for (int g = 2; g < dp * cp && g * apart <= node; ++g)
      if ((dp * cp) % g == 0) group = g;
    if (group > 0) k.shards.push_back(group);
  }
  k.overlaps = {false};
  if (dp * cp > 1) k.overlaps.push_back(true);
  if (s_.overlap_grad_reduce) k.overlaps = {*s_.overlap_grad_reduce};
  return k;
}

bool ShapeSearch::recomputations(TrainingConfig t) {
  const std::vector<Recompute> recomputes =
      fixed_or(s_.recompute, {Recompute::kNone, Recompute::kSelective, Recompute::kFull});
  bool none_fits = false;
  for (Recompute rc : recomputes) {
    if (shared_.stop) return false;
    t.recompute = rc;
    t.recompute_layers = rc == Recompute::kFull ? s_.recompute_layers.value_or(0) : 0;
    const bool fits = consider(t);
    if (rc == Recompute::kNone) none_fits = fits;
    // Full recomputation of fewer layers: only between "all fit" and "none fits".
    if (rc != Recompute::kFull || !fits || (none_fits && !s_.frontier) || s_.recompute_layers)
      continue;
    const int n = fewest_recomputed(t);
    if (n > 0) {
      t.recompute_layers = n;
      consider(t);
    }
    // The frontier also wants the trade-offs in between: powers of two.
    if (s_.frontier) {
      const std::vector<int> split = even_stage_split(layers_, t.pp);
      const int chunk = *std::min_element(split.begin(), split.end()) / t.vpp;
      for (int k = 1; k < chunk; k *= 2)
        if (k > n) {
          t.recompute_layers = k;
          consider(t);
        }
    }
  }
  return true;
}

void ShapeSearch::run(const Shape& shape) {
  const int tp = shape.tp, cp = shape.cp, pp = shape.pp;
  const int dp = s_.devices / tp / cp / pp;
  if ((s_.dp && dp != *s_.dp) || s_.global_batch % dp) return;
  // The experts' layouts, (etp, ep): expert tensor parallelism as given (another size than tp
  // lays expert parallelism over tp × cp × dp ÷ etp); else split as the dense layers and, with
  // tp > 1 where the stack has it, whole (etp 1, Megatron-Core's MoE recipes' choice).
  std::vector<int> etps = {s_.etp && *s_.etp != tp ? *s_.etp : 0};
  if (!s_.etp && m_.moe() && tp > 1 && (knob_spec(Knob::kEtp).stacks & stack_bit(s_.stack)) &&
      (!s_.engine || search_engine_rules(s_).expert_tensor_parallel))
    etps.push_back(1);
  std::vector<std::pair<int, int>> experts;  // (etp, ep)
  for (int etp : etps) {
    if (s_.ep && !m_.moe()) {
      experts.emplace_back(etp, *s_.ep);
      continue;
    }
    TrainingConfig probe;
    probe.tp = tp;
    probe.cp = cp;
    probe.dp = dp;
    probe.etp = etp;
    probe.moe_capacity_factor = s_.moe_capacity_factor;
    for (int e :
         s_.ep ? std::vector<int>{*s_.ep} : divisors(static_cast<std::int64_t>(dp) * cp * tp)) {
      probe.ep = e;
      if (!m_.moe() ? e == 1 : !rules::expert_tensor(m_, probe)) experts.emplace_back(etp, e);
    }
  }
  std::vector<std::int64_t> batches;
  if (s_.micro_batch)
    batches = {*s_.micro_batch};
  else
    for (int b : divisors(s_.global_batch / dp)) batches.push_back(b);
  bool going = true;
  for (std::size_t e = 0; going && e < experts.size(); ++e)
    for (std::size_t bi = 0; going && bi < batches.size(); ++bi) {
      const std::int64_t b = batches[bi];
      if (rules::batch(s_.global_batch, b, dp)) continue;
      const InnerKnobs k = inner_knobs(pp, dp, cp, tp, b);
      for (int vpp : k.vpps)
        for (bool sp : k.sps)
          for (int zero : k.zeros)
            for (int shard : zero == 3 ? k.shards : std::vector<int>{0})
              for (bool overlap : k.overlaps) {
                TrainingConfig t;
                t.seq_len = s_.seq_len;
                t.global_batch = s_.global_batch;
                t.micro_batch = b;
                t.tp = tp;
                t.cp = cp;
                t.pp = pp;
                t.dp = dp;
                t.etp = experts[e].first;
                t.ep = experts[e].second;
                t.vpp = vpp;
                t.sequence_parallel = sp;
                t.zero_stage = zero;
                t.shard_group = shard;
                t.overlap_grad_reduce = overlap;
                t.attention = s_.attention;
                t.moe_capacity_factor = s_.moe_capacity_factor;
                t.stack = s_.stack;
                t.fp8 = s_.fp8;
                StackChoices choices = s_.stack_choices;
                choices.overlap_grad_reduce = overlap;
                apply_stack_defaults(t, choices, &m_);
                going = going && recomputations(t);
              }
    }
  found = top_.take();
}

// Nothing matched the fixed knobs: evaluate them as given to report the broken rule.
[[noreturn]] void explain_no_configuration(const AnalyticCostModel& cost,
                                           const LlmSearchSettings& s) {
  TrainingConfig t;
  t.seq_len = s.seq_len;
  t.global_batch = s.global_batch;
  t.tp = s.tp.value_or(1);
  t.cp = s.cp.value_or(1);
  t.pp = s.pp.value_or(1);
  t.ep = s.ep.value_or(1);
  t.etp = s.etp.value_or(0);
  t.vpp = s.vpp.value_or(1);
  t.dp = s.dp.value_or(s.devices / std::max(1, t.tp * t.cp * t.pp));
  t.micro_batch = s.micro_batch.value_or(1);
  t.recompute = s.recompute.value_or(Recompute::kFull);
  t.recompute_layers = s.recompute_layers.value_or(0);
  t.sequence_parallel = s.sequence_parallel.value_or(false);
  t.zero_stage = s.zero_stage.value_or(0);
  t.shard_group = s.shard_group.value_or(0);
  if (t.devices() != s.devices) {
    if (!s.dp && s.devices % std::max(1, t.tp * t.cp * t.pp))  // no whole number of replicas
      throw FieldError("devices", indivisible_devices(s.devices, t.tp, t.cp, t.pp));
    throw FieldError("devices", fmt::format(" {} is not tp × cp × pp × dp = {} × {} × {} × {} = {}",
                                            s.devices, t.tp, t.cp, t.pp, t.dp, t.devices()));
  }
  t.stack = s.stack;
  t.fp8 = s.fp8;
  apply_stack_defaults(t, s.stack_choices,
                       &cost.model());  // the stack's knobs as fixed, checked with the rest
  cost.check(t);
  if (s.engine)  // the engine's own rules (NeMo's stage split, ...) on the knobs as given
    if (const auto v =
            rules::engine(search_engine_rules(s), t, static_cast<int>(cost.model().num_layers)))
      throw RuleViolation(*v);
  throw Error(ErrorKind::kUsage, "",
              "no configuration satisfies the fixed knobs together (heads divisible by tp, "
              "batch divisible by micro-batch × dp, at most one stage per layer, layers "
              "divisible by pp × vpp, experts divisible by ep)");
}

}  // namespace

EngineRules search_engine_rules(const LlmSearchSettings& s) {
  EngineRules e = engine_rules(s.engine.value_or(stack_engine(s.stack)));
  if (s.recipe_sets_precision) e.bf16_gradient_reduction = true;
  return e;
}

void search_within(LlmSearchSettings& s, Engine engine) {
  s.engine = engine;
  const EngineRules e = search_engine_rules(s);
  // The knobs the user fixed, checked as one configuration of them would be.
  TrainingConfig fixed;
  fixed.stack = s.stack;
  fixed.zero_stage = s.zero_stage.value_or(0);
  fixed.cp = s.cp.value_or(1);
  fixed.vpp = s.vpp.value_or(1);
  fixed.fp8 = s.fp8;
  // Unset, FP8 parameters are the engine's choice: the only one where it has no other.
  fixed.fp8_param_gather = s.stack_choices.fp8_param_gather.value_or(!e.fp8_without_param_gather);
  fixed.bf16_gradient_reduction = s.stack_choices.bf16_gradient_reduction.value_or(false);
  fixed.optimizer_moments = s.stack_choices.optimizer_moments.value_or(OptimizerMoments::kFp32);
  fixed.precision_aware_optimizer = s.stack_choices.precision_aware_optimizer.value_or(false);
  fixed.moe_shared_expert_overlap = s.stack_choices.moe_shared_expert_overlap.value_or(false);
  if (s.recompute == Recompute::kFull) fixed.recompute_layers = s.recompute_layers.value_or(0);
  if (const auto v = rules::engine(e, fixed, 0)) throw RuleViolation(*v);
  if (s.fp8 && !e.fp8_without_param_gather) s.stack_choices.fp8_param_gather = true;
  if (!e.shared_expert_overlap) s.stack_choices.moe_shared_expert_overlap = false;
  s.engine = engine;
  s.max_zero_stage = std::min(s.max_zero_stage, e.max_zero_stage);
  s.zero_stage_1 = s.zero_stage_1 && e.zero_stage_1;
  if (!e.context_parallel) s.cp = 1;
  if (!e.interleaving) s.vpp = 1;
  if (!e.uneven_stages) {
    s.even_stages_only = true;
    s.balance_stages = false;
  }
  if (!e.partial_recompute && !s.recompute_layers) s.recompute_layers = 0;
  // Sequence parallel wherever tensor parallelism could be (torchtitan's plans say so always).
  if (e.sequence_parallel_with_tp && !s.sequence_parallel) s.sequence_parallel = true;
}

LlmSearchResult search_llm(const AnalyticCostModel& cost, const LlmSearchSettings& settings) {
  // Only what the engine runs: the settings' engine, or the stack's.
  LlmSearchSettings s = settings;
  search_within(s, settings.engine.value_or(stack_engine(settings.stack)));
  const TransformerConfig& m = cost.model();
  if (s.devices < 1) throw FieldError("devices", ": expected at least 1");
  if (s.top_k < 1) throw FieldError("top", ": expected at least 1");
  SharedBounds shared;
  const std::vector<Shape> shapes = outer_shapes(m, s);
  std::vector<ShapeSearch> searches;
  searches.reserve(shapes.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) searches.emplace_back(cost, s, shared);
  std::atomic<int> shapes_done{0};
  tbb::parallel_for(std::size_t{0}, shapes.size(), [&](std::size_t i) {
    searches[i].run(shapes[i]);
    if (s.progress) {
      const double best = shared.best_seen.load();
      s.progress->report({fmt::format("{} on {} devices: training knobs", m.name, s.devices),
                          double(++shapes_done), double(shapes.size()), "(tp, cp, pp) shapes",
                          std::isfinite(best) ? best : NAN, "s per iteration"});
    }
  });

  LlmSearchResult out;
  TopK top(s.top_k);
  LlmFrontier frontier;
  for (ShapeSearch& p : searches) {
    for (auto& [o, c] : p.frontier.sorted()) frontier.offer(o, c);
    out.evaluated += p.evaluated;
    out.rejected_memory += p.rejected;
    out.balanced += p.balanced;
    if (p.leanest &&
        (!out.leanest ||
         p.leanest->result.memory.peak_bytes < out.leanest->result.memory.peak_bytes ||
         (p.leanest->result.memory.peak_bytes == out.leanest->result.memory.peak_bytes &&
          llm_candidate_before(*p.leanest, *out.leanest))))
      out.leanest = p.leanest;
    for (auto& c : p.found) top.offer(std::move(c));
  }
  out.timed_out = shared.stop;
  out.top = top.take();
  for (auto& [o, c] : frontier.sorted()) out.frontier.push_back(std::move(c));
  out.seconds = std::chrono::duration<double>(Clock::now() - shared.start).count();
  if (out.evaluated == 0) explain_no_configuration(cost, s);
  return out;
}

}  // namespace paraplan
