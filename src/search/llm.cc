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
#include "ir/training_rules.h"
#include "search/frontier.h"

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
                         t.recompute_layers, t.sequence_parallel, t.zero_stage,
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

std::optional<std::vector<int>> balance_stages(const AnalyticCostModel& cost,
                                               const TrainingConfig& config) {
  const AnalyticStagePricer pricer(cost, config);
  const int n = pricer.layers(), p = config.pp;
  const double inf = std::numeric_limits<double>::infinity();
  // best[r][i]: the fastest slowest stage for layers i.. in exactly r stages; end[r][i]: where
  // the first of them ends (exclusive).
  std::vector<std::vector<double>> best(static_cast<std::size_t>(p + 1),
                                        std::vector<double>(static_cast<std::size_t>(n + 1), inf));
  std::vector<std::vector<int>> end(best.size(),
                                    std::vector<int>(static_cast<std::size_t>(n + 1), -1));
  best[0][static_cast<std::size_t>(n)] = 0;
  for (int r = 1; r <= p; ++r) {
    const auto& rest = best[static_cast<std::size_t>(r - 1)];
    for (int i = (r == p ? 0 : 1); i + r <= n; ++i) {
      // The first stage is [i, j): its time rises with j, rest[j] falls; the optimum is at the
      // first j where the stage is at least the rest, or just before it.
      const int lo_j = i + 1, hi_j = n - (r - 1);
      if (r == 1) {
        best[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] =
            pricer.stage_time(i, n - 1, r);
        end[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] = n;
        continue;
      }
      int lo = lo_j, hi = hi_j;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (pricer.stage_time(i, mid - 1, r) >= rest[static_cast<std::size_t>(mid)])
          hi = mid;
        else
          lo = mid + 1;
      }
      double value = inf;
      int chosen = -1;
      for (int j : {lo - 1, lo}) {
        if (j < lo_j || j > hi_j) continue;
        const double v =
            std::max(pricer.stage_time(i, j - 1, r), rest[static_cast<std::size_t>(j)]);
        if (v < value) {
          value = v;
          chosen = j;
        }
      }
      best[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] = value;
      end[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] = chosen;
    }
  }
  if (!(best[static_cast<std::size_t>(p)][0] < inf)) return std::nullopt;
  std::vector<int> split;
  for (int r = p, i = 0; r >= 1; --r) {
    const int j = end[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
    split.push_back(j - i);
    i = j;
  }
  return split;
}

LlmSearchResult search_llm(const AnalyticCostModel& cost, const LlmSearchSettings& s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const TransformerConfig& m = cost.model();
  const int layers = static_cast<int>(m.num_layers);
  LlmSearchResult out;
  if (s.devices < 1) throw Error(ErrorKind::kUsage, "", "--devices: expected at least 1");
  if (s.top_k < 1) throw Error(ErrorKind::kUsage, "", "--top: expected at least 1");
  std::atomic<bool> stop{false};
  // Every task's k-th best time bounds the overall k-th best: the smallest of them prunes all.
  std::atomic<double> shared_threshold{std::numeric_limits<double>::infinity()};
  std::atomic<double> best_seen{std::numeric_limits<double>::infinity()};  // for progress only

  // The outer shapes (tp, cp, pp) are independent tasks, each with its own top k (a
  // configuration outside a task's top k is outside the overall one, so pruning stays exact).
  struct Shape {
    int tp, cp, pp;
  };
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
  struct Partial {
    std::vector<LlmCandidate> top;
    LlmFrontier frontier;
    std::int64_t evaluated = 0, rejected = 0, balanced = 0;
  };
  std::vector<Partial> partials(shapes.size());

  auto run_shape = [&](const Shape& shape, Partial& part) {
    TopK top(s.top_k);
    std::int64_t considered = 0;
    // Prices one configuration (and its best layer split); returns whether it fits.
    auto consider = [&](const TrainingConfig& t) {
      AnalyticResult r;
      try {
        r = cost.evaluate(t);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kUsage) throw;
        return false;  // a rule the loops do not filter (a fixed knob with a searched one)
      }
      ++part.evaluated;
      LlmCandidate best{t, r};
      bool fits = r.fits;
      if (s.balance_stages && t.pp > 1 && t.vpp == 1 && t.recompute_layers == 0 &&
          t.microbatches() >= t.pp) {
        const double bound = cost.time_lower_bound(t);
        const bool uniform_optimal = r.fits && r.iteration_time_s <= bound;
        if (s.frontier ||
            (!uniform_optimal && bound < std::min(top.threshold(), shared_threshold.load()))) {
          ++part.balanced;
          if (auto split = balance_stages(cost, t); split && *split != r.stage_layers) {
            TrainingConfig tb = t;
            tb.stage_layers = *split;
            AnalyticResult rb = cost.evaluate(tb);
            ++part.evaluated;
            if (s.frontier && rb.fits) {
              LlmCandidate cb{tb, rb};
              part.frontier.offer(objectives(cb), cb);
            }
            if (rb.fits && (!r.fits || rb.iteration_time_s < r.iteration_time_s)) {
              best = {tb, rb};
              fits = true;
            }
          }
        }
      }
      if (s.frontier && r.fits) {
        LlmCandidate cu{t, r};
        part.frontier.offer(objectives(cu), cu);
      }
      if (fits) {
        const double time = best.result.iteration_time_s;
        for (double seen = best_seen.load();
             time < seen && !best_seen.compare_exchange_weak(seen, time);) {
        }
        top.offer(std::move(best));
        const double mine = top.threshold();
        double seen = shared_threshold.load();
        while (mine < seen && !shared_threshold.compare_exchange_weak(seen, mine)) {
        }
      } else
        ++part.rejected;
      if (s.time_limit_s > 0 && (++considered & 63) == 0 &&
          std::chrono::duration<double>(Clock::now() - start).count() > s.time_limit_s)
        stop = true;
      return fits;
    };
    // The smallest number of recomputed layers per stage that fits (memory falls and time rises
    // with it, so that one is the fastest); 0 if none short of all.
    auto fewest_recomputed = [&](TrainingConfig t) {
      const std::vector<int> split = even_stage_split(layers, t.pp);
      int lo = 1, hi = *std::min_element(split.begin(), split.end()) / t.vpp - 1;
      int found = 0;
      while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        t.recompute_layers = mid;
        const bool fits = cost.evaluate(t).fits;
        ++part.evaluated;
        if (fits) {
          found = mid;
          hi = mid - 1;
        } else {
          lo = mid + 1;
        }
      }
      return found;
    };

    const int tp = shape.tp, cp = shape.cp, pp = shape.pp;
    const int dp = s.devices / tp / cp / pp;
    if ((s.dp && dp != *s.dp) || s.global_batch % dp) return;
    std::vector<int> eps = {1};
    if (s.ep) {
      eps = {*s.ep};
    } else if (m.moe()) {
      eps.clear();
      for (int e : divisors(static_cast<std::int64_t>(dp) * cp))
        if (!rules::experts(m, e, dp, cp, s.moe_capacity_factor)) eps.push_back(e);
    }
    std::vector<std::int64_t> batches;
    if (s.micro_batch)
      batches = {*s.micro_batch};
    else
      for (int b : divisors(s.global_batch / dp)) batches.push_back(b);
    const std::vector<Recompute> recomputes =
        fixed_or(s.recompute, {Recompute::kNone, Recompute::kSelective, Recompute::kFull});
    for (int ep : eps)
      for (std::int64_t b : batches) {
        if (rules::batch(s.global_batch, b, dp)) continue;
        std::vector<int> vpps = {1};
        if (s.vpp)
          vpps = {*s.vpp};
        else if (pp > 1) {
          TrainingConfig probe;  // what the interleaving rule reads
          probe.pp = pp;
          probe.dp = dp;
          probe.global_batch = s.global_batch;
          probe.micro_batch = b;
          for (int v = 2; v <= layers / pp; ++v) {
            probe.vpp = v;
            if (!rules::interleaving(m, probe)) vpps.push_back(v);
          }
        }
        std::vector<bool> sps = {false};
        if (tp > 1 && !rules::sequence_parallel(s.seq_len, cp, tp)) sps.push_back(true);
        if (s.sequence_parallel) sps = {*s.sequence_parallel};
        std::vector<int> zeros;
        for (int z = 0; z <= s.max_zero_stage; ++z)
          if (!rules::zero(z, pp)) zeros.push_back(z);
        if (s.zero_stage) zeros = {*s.zero_stage};
        std::vector<bool> overlaps = {false};
        if (dp * cp > 1) overlaps.push_back(true);
        if (s.overlap_grad_reduce) overlaps = {*s.overlap_grad_reduce};
        for (int vpp : vpps)
          for (bool sp : sps)
            for (int zero : zeros)
              for (bool overlap : overlaps) {
                TrainingConfig t;
                t.seq_len = s.seq_len;
                t.global_batch = s.global_batch;
                t.micro_batch = b;
                t.tp = tp;
                t.cp = cp;
                t.pp = pp;
                t.dp = dp;
                t.ep = ep;
                t.vpp = vpp;
                t.sequence_parallel = sp;
                t.zero_stage = zero;
                t.overlap_grad_reduce = overlap;
                t.attention = s.attention;
                t.moe_capacity_factor = s.moe_capacity_factor;
                bool none_fits = false;
                for (Recompute rc : recomputes) {
                  if (stop) return;
                  t.recompute = rc;
                  t.recompute_layers = rc == Recompute::kFull ? s.recompute_layers.value_or(0) : 0;
                  const bool fits = consider(t);
                  if (rc == Recompute::kNone) none_fits = fits;
                  // Full recomputation of fewer layers: only between "all fit" and "none fits".
                  if (rc == Recompute::kFull && fits && (!none_fits || s.frontier) &&
                      !s.recompute_layers) {
                    const int n = fewest_recomputed(t);
                    if (n > 0) {
                      t.recompute_layers = n;
                      consider(t);
                    }
                    // The frontier also wants the trade-offs in between: powers of two.
                    if (s.frontier) {
                      const std::vector<int> split = even_stage_split(layers, pp);
                      const int chunk = *std::min_element(split.begin(), split.end()) / vpp;
                      for (int k = 1; k < chunk; k *= 2)
                        if (k > n) {
                          t.recompute_layers = k;
                          consider(t);
                        }
                    }
                  }
                }
              }
      }
    part.top = top.take();
  };
  std::atomic<int> shapes_done{0};
  tbb::parallel_for(std::size_t{0}, shapes.size(), [&](std::size_t i) {
    run_shape(shapes[i], partials[i]);
    if (s.progress) {
      const double best = best_seen.load();
      s.progress->report({fmt::format("{} on {} devices: training knobs", m.name, s.devices),
                          double(++shapes_done), double(shapes.size()), "(tp, cp, pp) shapes",
                          std::isfinite(best) ? best : NAN, "s per iteration"});
    }
  });

  TopK top(s.top_k);
  LlmFrontier frontier;
  for (Partial& p : partials) {
    for (auto& [o, c] : p.frontier.sorted()) frontier.offer(o, c);
    out.evaluated += p.evaluated;
    out.rejected_memory += p.rejected;
    out.balanced += p.balanced;
    for (auto& c : p.top) top.offer(std::move(c));
  }
  out.timed_out = stop;
  out.top = top.take();
  for (auto& [o, c] : frontier.sorted()) out.frontier.push_back(std::move(c));
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (out.evaluated == 0) {
    // Nothing matched the fixed knobs: evaluate them as given to report the broken rule.
    TrainingConfig t;
    t.seq_len = s.seq_len;
    t.global_batch = s.global_batch;
    t.tp = s.tp.value_or(1);
    t.cp = s.cp.value_or(1);
    t.pp = s.pp.value_or(1);
    t.ep = s.ep.value_or(1);
    t.vpp = s.vpp.value_or(1);
    t.dp = s.dp.value_or(s.devices / std::max(1, t.tp * t.cp * t.pp));
    t.micro_batch = s.micro_batch.value_or(1);
    t.recompute = s.recompute.value_or(Recompute::kFull);
    t.recompute_layers = s.recompute_layers.value_or(0);
    t.sequence_parallel = s.sequence_parallel.value_or(false);
    t.zero_stage = s.zero_stage.value_or(0);
    if (t.devices() != s.devices)
      throw Error(ErrorKind::kUsage, "",
                  "--devices " + std::to_string(s.devices) + " is not tp × cp × pp × dp = " +
                      std::to_string(t.tp) + " × " + std::to_string(t.cp) + " × " +
                      std::to_string(t.pp) + " × " + std::to_string(t.dp));
    cost.check(t);
    throw Error(ErrorKind::kUsage, "",
                "no configuration satisfies the fixed knobs together (heads divisible by tp, "
                "batch divisible by micro-batch × dp, at most one stage per layer, layers "
                "divisible by pp × vpp, experts divisible by ep)");
  }
  return out;
}

}  // namespace paraplan
