// The transformer planner against independent enumerations: the layer split against every
// composition of the layers, the joint search against plain loops over every knob.
#include "search/llm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <functional>
#include <optional>
#include <random>

#include "cost/analytic_stages.h"
#include "ir/error.h"
#include "ir/training_rules.h"
#include "search/compositions_test_support.h"
#include "search/frontier.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan {
namespace {

AnalyticCostModel model_on(const std::string& name, const std::string& cluster, int devices) {
  return AnalyticCostModel(*zoo::llm_model(name), *zoo::cluster_preset(cluster, devices),
                           default_calibration(cluster == "dgx-a100" ? "A100" : "H100"));
}

/// A small GPT on `devices` A100s with `memory_bytes` each.
AnalyticCostModel tiny(int layers, int devices, double memory_bytes, int vocab = 50257,
                       int hidden = 1024) {
  Cluster c = *zoo::cluster_preset("dgx-a100", devices);
  c.device_types[0].memory_bytes = memory_bytes;
  // Budgets here are fractions of a GiB, for the tensors of a tiny model: no runtime reserve.
  Calibration cal = default_calibration("A100");
  cal.runtime_reserved_bytes = 0;
  return AnalyticCostModel(zoo::megatron_gpt("tiny", 8, hidden, layers, vocab), c, cal);
}

using testing_support::compositions;

double bottleneck(const AnalyticResult& r) {
  double worst = 0;
  for (const auto& st : r.stages) worst = std::max(worst, st.time_per_microbatch_s);
  return worst;
}

// Twin of balance_stages: the fastest slowest stage over every split that fits.
RC_GTEST_PROP(LlmSearch, BalancedSplitIsTheBestBottleneck, ()) {
  const int layers = *rc::gen::inRange(2, 11);
  const int pp = *rc::gen::inRange(2, std::min(layers, 5) + 1);
  const int tp = *rc::gen::element(1, 2);
  const double memory = *rc::gen::element(0.3, 0.6, 1.0, 4.0) * 1073741824.0;
  auto cost = tiny(layers, tp * pp * 2, memory);
  TrainingConfig t;
  t.seq_len = 1024;
  t.micro_batch = *rc::gen::element(1, 2, 4);
  t.global_batch = t.micro_batch * 2 * *rc::gen::inRange(pp, 2 * pp + 1);
  t.tp = tp;
  t.pp = pp;
  t.dp = 2;
  t.recompute = *rc::gen::element(Recompute::kNone, Recompute::kFull);
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> prefix;
  compositions(layers, pp, prefix, [&](const std::vector<int>& split) {
    TrainingConfig ts = t;
    ts.stage_layers = split;
    AnalyticResult r = cost.evaluate(ts);
    if (r.fits) best = std::min(best, bottleneck(r));
  });
  auto split = balance_stages(cost, t);
  RC_ASSERT(split.has_value() == (best < std::numeric_limits<double>::infinity()));
  if (split) {
    t.stage_layers = *split;
    AnalyticResult r = cost.evaluate(t);
    RC_ASSERT(r.fits);
    RC_ASSERT(std::abs(bottleneck(r) - best) <= 1e-12 * best);
  }
}

/// Every configuration of the knobs by plain loops (sequence 1024; tp and cp up to `max_tp`,
/// `max_cp`), each Megatron-Core overlap on or off where it applies, that passes the model's
/// checks; `visit` sees each with the even split.
void for_each_configuration(const AnalyticCostModel& cost, int layers, int devices,
                            std::int64_t batch, Stack stack, int max_tp, int max_cp,
                            const std::function<void(const TrainingConfig&)>& visit) {
  for (int tp = 1; tp <= std::min(devices, max_tp); ++tp)
    for (int cp = 1; tp * cp <= devices && cp <= max_cp; ++cp)
      for (int pp = 1; tp * cp * pp <= devices; ++pp) {
        if (devices % (tp * cp * pp)) continue;
        for (int b = 1; b <= batch; ++b)
          for (int vpp = 1; vpp <= layers; ++vpp)
            for (int rc = 0; rc <= layers + 2; ++rc)  // none, selective, full, N = 1, 2, ...
              for (bool sp : {false, true})
                for (int zero : {0, 1, 2, 3})
                  for (bool overlap : {false, true}) {
                    if (stack == Stack::kMegatron && zero > 1) continue;  // Megatron's ZeRO
                    TrainingConfig t;
                    t.stack = stack;
                    t.seq_len = 1024;
                    t.global_batch = batch;
                    t.micro_batch = b;
                    t.tp = tp;
                    t.cp = cp;
                    t.pp = pp;
                    t.dp = devices / (tp * cp * pp);
                    t.vpp = vpp;
                    t.recompute = rc == 0   ? Recompute::kNone
                                  : rc == 1 ? Recompute::kSelective
                                            : Recompute::kFull;
                    t.recompute_layers = rc > 2 ? rc - 2 : 0;
                    t.sequence_parallel = sp;
                    t.zero_stage = zero;
                    t.overlap_grad_reduce = overlap;
                    try {
                      cost.check(t);
                    } catch (const Error&) {
                      continue;
                    }
                    for (int mask = 0; mask < 8; ++mask) {
                      TrainingConfig o = t;
                      o.tp_comm_overlap = mask & 1;
                      o.overlap_p2p_comm = mask & 2;
                      o.overlap_param_gather = mask & 4;
                      if (!rules::overlaps(o)) visit(o);
                    }
                  }
      }
}

/// The frontier twin's enumeration: each configuration with the even split and, where the
/// planner would try one, the balanced split (which has its own twin above); `visit` sees the
/// result of each that fits.
void for_each_fitting_plan(const AnalyticCostModel& cost, int layers, int devices,
                           std::int64_t batch,
                           const std::function<void(const AnalyticResult&)>& visit,
                           Stack stack = Stack::kMegatron) {
  auto price = [&](const TrainingConfig& t) {
    try {
      const auto r = cost.evaluate(t);
      if (r.fits) visit(r);
    } catch (const Error&) {
    }
  };
  for_each_configuration(
      cost, layers, devices, batch, stack, devices, devices, [&](const TrainingConfig& t) {
        price(t);
        if (t.pp > 1 && t.vpp == 1 && t.recompute_layers == 0 && t.microbatches() >= t.pp)
          if (auto split = balance_stages(cost, t)) {
            TrainingConfig o = t;
            o.stage_layers = *split;
            price(o);
          }
      });
}

// What the twin finds over the planner's space (every knob; each configuration with the even
// split and, where the planner balances one, the splits whose slowest stage is fastest, found
// by trying every composition of the layers): the fastest iteration whichever of the tied
// balanced splits is taken (`low`), and when the worst of them is (`high`); the planner takes
// one, so its optimum lies between (equal without ties).
struct TwinOptimum {
  double low = std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  int pp_at_low = 0;
};

TwinOptimum independent_twin(const AnalyticCostModel& cost, int layers, int devices,
                             std::int64_t batch, Stack stack, int max_tp, int max_cp) {
  TwinOptimum best;
  auto offer = [&](double low, double high, int pp) {
    if (low < best.low) best.pp_at_low = pp;
    best.low = std::min(best.low, low);
    best.high = std::min(best.high, high);
  };
  auto fitting = [&](const TrainingConfig& t) -> std::optional<AnalyticResult> {
    try {
      AnalyticResult r = cost.evaluate(t);
      if (r.fits) return r;
    } catch (const Error&) {
    }
    return std::nullopt;
  };
  for_each_configuration(
      cost, layers, devices, batch, stack, max_tp, max_cp, [&](const TrainingConfig& t) {
        if (auto r = fitting(t)) offer(r->iteration_time_s, r->iteration_time_s, t.pp);
        if (t.pp == 1 || t.vpp > 1 || t.recompute_layers > 0 || t.microbatches() < t.pp) return;
        // Every composition; keep those whose slowest stage is fastest.
        double fastest_bottleneck = std::numeric_limits<double>::infinity();
        std::vector<double> tied;
        std::vector<int> prefix;
        compositions(layers, t.pp, prefix, [&](const std::vector<int>& split) {
          TrainingConfig ts = t;
          ts.stage_layers = split;
          const auto r = fitting(ts);
          if (!r) return;
          const double neck = bottleneck(*r);
          if (neck < fastest_bottleneck * (1 - 1e-12)) {
            fastest_bottleneck = neck;
            tied.clear();
          }
          if (neck <= fastest_bottleneck * (1 + 1e-12)) tied.push_back(r->iteration_time_s);
        });
        if (!tied.empty())
          offer(*std::min_element(tied.begin(), tied.end()),
                *std::max_element(tied.begin(), tied.end()), t.pp);
      });
  return best;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr int kRandomTwinCases = 4;  // the sanitizer build: the same checks on fewer cases
#else
constexpr int kRandomTwinCases = 10;
#endif

// Twin of search_llm on random small cases: the enumeration above (plain loops, every layer
// split by composition, nothing of the planner's) against the planner, and optima with several
// stages among them.
TEST(LlmSearch, BestEqualsAnIndependentEnumerationOnRandomCases) {
  // Wide layers and a small vocabulary: the layers, not the embedding or the buffers of another
  // process group, hold the memory, so that splitting them into stages pays.
  constexpr int kVocab = 2048, kHidden = 4096;
  std::mt19937 random(20261125);
  int multi_stage = 0, exact = 0;
  for (int c = 0; c < kRandomTwinCases; ++c) {
    const int layers = std::uniform_int_distribution<int>(3, 8)(random);
    const int devices = std::array{4, 8}[std::uniform_int_distribution<int>(0, 1)(random)];
    const bool tight = c % 2 == 1;
    const int batch =
        tight ? 16 : std::array{4, 8, 16}[std::uniform_int_distribution<int>(0, 2)(random)];
    const Stack stack = c % 3 == 2 ? Stack::kDeepSpeed : Stack::kMegatron;
    LlmSearchSettings s;
    s.stack = stack;
    s.devices = devices;
    s.global_batch = batch;
    s.seq_len = 1024;
    s.top_k = 1;
    // Every other case without tensor or context parallelism and a budget just below what any
    // plan without a pipeline needs (found by the planner's frontier; it only sets the case), so
    // that its optimum is a pipeline; else every knob and a loose budget.
    double memory_bytes = 80.0 * 1073741824.0;
    if (tight) {
      s.tp = s.cp = 1;
      LlmSearchSettings one_stage = s;
      one_stage.pp = 1;
      one_stage.frontier = true;
      const auto f = search_llm(tiny(layers, devices, memory_bytes, kVocab, kHidden), one_stage);
      double leanest = memory_bytes;
      for (const auto& p : f.frontier) leanest = std::min(leanest, p.result.memory.peak_bytes);
      memory_bytes = 0.97 * leanest;
    }
    const std::string what = fmt::format("{} layers, {} devices, batch {}, {:.0f} bytes, {}",
                                         layers, devices, batch, memory_bytes, stack_text(stack));
    auto cost = tiny(layers, devices, memory_bytes, kVocab, kHidden);
    const auto found = search_llm(cost, s);
    const TwinOptimum twin = independent_twin(cost, layers, devices, batch, stack,
                                              tight ? 1 : devices, tight ? 1 : devices);
    if (twin.low == std::numeric_limits<double>::infinity()) {
      EXPECT_TRUE(found.top.empty()) << what;
      continue;
    }
    ASSERT_FALSE(found.top.empty()) << what;
    const double planner = found.top[0].result.iteration_time_s;
    EXPECT_TRUE(found.top[0].result.fits) << what;
    EXPECT_GE(planner, twin.low * (1 - 1e-12)) << what;
    EXPECT_LE(planner, twin.high * (1 + 1e-12)) << what;
    exact += twin.low == twin.high;
    multi_stage += twin.pp_at_low > 1 && found.top[0].config.pp > 1;
  }
  EXPECT_GE(multi_stage, 1) << "no case's optimum is a pipeline: the cases test too little";
  EXPECT_GE(exact, kRandomTwinCases / 2) << "ties everywhere: the bounds test too little";
}

// The frontier against the twin's enumeration: nothing dominated, the fastest point is the
// planner's optimum, the leanest is the smallest memory of any plan that fits.
TEST(LlmSearch, FrontierIsNonDominatedAndSpansFastestToLeanest) {
  for (auto [layers, devices, batch, memory_gib] :
       {std::tuple{8, 8, 16, 80.0}, std::tuple{6, 16, 32, 2.0}}) {
    auto cost = tiny(layers, devices, memory_gib * 1073741824.0);
    LlmSearchSettings s;
    s.devices = devices;
    s.global_batch = batch;
    s.seq_len = 1024;
    s.top_k = 1;
    const auto best = search_llm(cost, s);
    s.frontier = true;
    const auto f = search_llm(cost, s);
    ASSERT_FALSE(f.frontier.empty());
    for (const auto& a : f.frontier)
      for (const auto& b : f.frontier) {
        const Objectives oa{a.result.iteration_time_s, a.result.memory.peak_bytes,
                            a.config.devices()};
        const Objectives ob{b.result.iteration_time_s, b.result.memory.peak_bytes,
                            b.config.devices()};
        EXPECT_FALSE(oa.dominates(ob));
      }
    EXPECT_EQ(f.frontier.front().result.iteration_time_s, best.top[0].result.iteration_time_s);
    double leanest = std::numeric_limits<double>::infinity();
    for_each_fitting_plan(cost, layers, devices, batch, [&](const AnalyticResult& r) {
      leanest = std::min(leanest, r.memory.peak_bytes);
    });
    double frontier_leanest = std::numeric_limits<double>::infinity();
    for (const auto& c : f.frontier)
      frontier_leanest = std::min(frontier_leanest, c.result.memory.peak_bytes);
    EXPECT_EQ(frontier_leanest, leanest);
  }
}

TEST(LlmSearch, FixedKnobsAreKeptAndTopIsSorted) {
  auto cost = model_on("llama3-70b", "dgx-h100", 256);
  LlmSearchSettings s;
  s.devices = 256;
  s.global_batch = 512;
  s.seq_len = 4096;
  s.tp = 8;
  s.recompute = Recompute::kSelective;
  s.top_k = 10;
  auto r = search_llm(cost, s);
  ASSERT_FALSE(r.top.empty());
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    EXPECT_EQ(r.top[i].config.tp, 8);
    EXPECT_EQ(r.top[i].config.recompute, Recompute::kSelective);
    EXPECT_TRUE(r.top[i].result.fits);
    if (i) {
      EXPECT_LE(r.top[i - 1].result.iteration_time_s, r.top[i].result.iteration_time_s);
    }
  }
  s.tp = 3;  // 64 heads are not divisible by 3
  EXPECT_THROW(search_llm(cost, s), Error);
}

TEST(LlmSearch, EveryCandidateIsAPlanWithItsStagesAndKnobs) {
  auto cost = model_on("llama3-70b", "dgx-h100", 256);
  LlmSearchSettings s;
  s.devices = 256;
  s.global_batch = 512;
  s.seq_len = 4096;
  s.top_k = 20;
  const LlmSearchResult r = search_llm(cost, s);
  ASSERT_FALSE(r.top.empty());
  bool interleaved = false;
  for (const LlmCandidate& c : r.top) {
    const Plan plan = llm_plan(c);
    const TrainingConfig& t = c.config;
    EXPECT_EQ(plan.kind(), PlanKind::kTransformer);
    EXPECT_STREQ(plan.planner(), "llm");
    EXPECT_TRUE(plan.feasible);
    EXPECT_EQ(plan.objective, c.result.iteration_time_s);
    EXPECT_EQ(plan.devices_used, t.devices());
    EXPECT_EQ(plan.microbatches, t.microbatches());
    ASSERT_EQ(static_cast<int>(plan.stages.size()), t.pp);
    int next = 0;
    double fullest = 0;
    for (int i = 0; i < t.pp; ++i) {
      const Stage& st = plan.stages[static_cast<std::size_t>(i)];
      for (int l : st.layers) EXPECT_EQ(l, next++);  // contiguous blocks, in order
      EXPECT_EQ(st.tensor_parallel, t.tp);
      EXPECT_EQ(st.data_parallel, t.dp);
      // 1F1B: stage i holds min(pp - i, m) micro-batches; the last stage one.
      if (t.vpp == 1) {
        EXPECT_EQ(st.inflight_microbatches, std::min<std::int64_t>(t.pp - i, t.microbatches()));
      }
      fullest = std::max(fullest, st.memory_bytes);
    }
    EXPECT_EQ(next, static_cast<int>(cost.model().num_layers));
    const TrainingPlan& training = plan.as<TrainingPlan>();
    EXPECT_EQ(training.memory.peak_bytes, fullest);
    EXPECT_EQ(training.config.tp, t.tp);
    EXPECT_EQ(training.config.stage_layers, c.result.stage_layers);
    EXPECT_THROW(plan.as<IntraOpDetail>(), Error);  // a checked cast
    interleaved = interleaved || t.vpp > 1;
    EXPECT_EQ(plan.schedule, t.vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB);
  }
  EXPECT_TRUE(interleaved) << "the top 20 should include an interleaved plan";
}

TEST(LlmSearch, MixtureOfExpertsSearchesExpertParallelism) {
  auto cost = model_on("mixtral-8x7b", "dgx-h100", 64);
  LlmSearchSettings s;
  s.devices = 64;
  s.global_batch = 256;
  s.seq_len = 4096;
  s.top_k = 3;
  auto r = search_llm(cost, s);
  ASSERT_FALSE(r.top.empty());
  bool uses_ep = false;
  for (const auto& c : r.top) uses_ep = uses_ep || c.config.ep > 1;
  EXPECT_TRUE(uses_ep);  // replicating 8 experts on every device is never the fastest
  s.ep = 3;
  EXPECT_THROW(search_llm(cost, s), Error);
}

TEST(LlmSearch, SameInputSamePlans) {
  auto cost = model_on("gpt3-175b", "dgx-a100", 256);
  LlmSearchSettings s;
  s.devices = 256;
  s.global_batch = 512;
  s.top_k = 5;
  auto a = search_llm(cost, s), b = search_llm(cost, s);
  ASSERT_EQ(a.top.size(), b.top.size());
  // Every knob of every plan, in the same order.
  auto knobs = [](const TrainingConfig& t) {
    return std::tuple{t.tp,
                      t.cp,
                      t.pp,
                      t.dp,
                      t.ep,
                      t.vpp,
                      t.micro_batch,
                      t.global_batch,
                      t.recompute,
                      t.recompute_layers,
                      t.sequence_parallel,
                      t.zero_stage,
                      t.overlap_grad_reduce,
                      t.tp_comm_overlap,
                      t.overlap_p2p_comm,
                      t.overlap_param_gather,
                      t.stack,
                      t.stage_layers};
  };
  for (std::size_t i = 0; i < a.top.size(); ++i) {
    EXPECT_EQ(a.top[i].result.iteration_time_s, b.top[i].result.iteration_time_s);
    EXPECT_EQ(a.top[i].result.memory.peak_bytes, b.top[i].result.memory.peak_bytes);
    EXPECT_TRUE(knobs(a.top[i].config) == knobs(b.top[i].config)) << i;
  }
}

}  // namespace
}  // namespace paraplan
