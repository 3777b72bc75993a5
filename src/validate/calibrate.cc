#include "validate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "validate/vtrain.h"

namespace paraplan::validate {
namespace {

// Uniform in [0, 1) and standard normal deviates from the 64-bit Mersenne Twister, whose output
// sequence the C++ standard fixes (its distributions it does not).
class Deviates {
 public:
  explicit Deviates(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double normal() {  // Box-Muller
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
  }
  std::size_t index(std::size_t n) {
    return std::min(n - 1, static_cast<std::size_t>(uniform() * n));
  }

 private:
  std::mt19937_64 engine_;
};

// A parameter with its bounds resolved against the start.
struct Bounded {
  const FittedParameter* parameter;
  double low, high;
  double clamp(double x) const { return std::clamp(x, low, high); }
};

}  // namespace

const std::vector<FittedParameter>& fitted_parameters() {
  static const std::vector<FittedParameter> parameters = {
      {"gemm_efficiency", 0.5, 0.92, false,
       [](Calibration& c) -> double& { return c.gemm_efficiency; }},
      {"gemm_half_efficiency_flops", 1e7, 1e10, true,
       [](Calibration& c) -> double& { return c.gemm_half_efficiency_flops; }},
      {"attention_efficiency", 0.2, 0.8, false,
       [](Calibration& c) -> double& { return c.attention_efficiency; }},
      {"flash_attention_efficiency", 0.15, 0.9, false,
       [](Calibration& c) -> double& { return c.flash_attention_efficiency; }},
      {"flash_backward_efficiency", 0.15, 0.9, false,
       [](Calibration& c) -> double& { return c.flash_backward_efficiency; }},
      {"memory_bandwidth_bytes_per_s", 0.5, 1.0, true,
       [](Calibration& c) -> double& { return c.memory_bandwidth_bytes_per_s; }, true},
      // Standard attention's traffic per score, forward: the product written and read back (4),
      // softmax read and written (4), dropout and its mask (5); fused kernels save some.
      {"score_bytes_per_element", 8, 16, false,
       [](Calibration& c) -> double& { return c.score_bytes_per_element; }},
      {"hidden_bytes_per_element", 0, 100, false,
       [](Calibration& c) -> double& { return c.hidden_bytes_per_element; }},
      {"eager_hidden_bytes_per_element", 0, 200, false,
       [](Calibration& c) -> double& { return c.eager_hidden_bytes_per_element; }},
      {"layer_overhead_s", 0, 2e-3, false,
       [](Calibration& c) -> double& { return c.layer_overhead_s; }},
      // The loss on fp32 logits: log-softmax read and written, its gradient, the casts.
      {"logit_bytes_per_element", 6, 64, false,
       [](Calibration& c) -> double& { return c.logit_bytes_per_element; }},
      // NCCL's bus bandwidth stays below the links' nominal rate.
      {"collective_efficiency/0", 0.5, 0.95, false,
       [](Calibration& c) -> double& { return c.collective_efficiency.at(0); }},
      {"collective_efficiency/1", 0.5, 0.95, false,
       [](Calibration& c) -> double& { return c.collective_efficiency.at(1); }},
      {"ring_step_latency_s", 1e-6, 1e-4, true,
       [](Calibration& c) -> double& { return c.ring_step_latency_s; }},
      // NCCL's own model charges 4-10 µs per step that crosses the network (src/graph/tuning.cc).
      {"network_step_latency_s", 3e-6, 1e-4, true,
       [](Calibration& c) -> double& { return c.network_step_latency_s; }},
      // SM contention of communication hidden behind compute.
      {"overlap_slowdown", 0, 1, false,
       [](Calibration& c) -> double& { return c.overlap_slowdown; }},
      {"p2p_efficiency/0", 0.5, 0.95, false,
       [](Calibration& c) -> double& { return c.p2p_efficiency.at(0); }},
      {"p2p_efficiency/1", 0.5, 0.95, false,
       [](Calibration& c) -> double& { return c.p2p_efficiency.at(1); }},
      {"p2p_overhead_s", 0, 2e-3, false,
       [](Calibration& c) -> double& { return c.p2p_overhead_s; }},
      {"iteration_overhead_s", 0, 0.5, false,
       [](Calibration& c) -> double& { return c.iteration_overhead_s; }},
  };
  return parameters;
}

FitScore fit_score(const FitData& data, const Calibration& calibration) {
  // Each target is aimed at with a 5 % margin, so that a fit does not sit on its edge.
  constexpr double kMargin = 0.95;
  const auto multi_rows = score_runs(data.multi, calibration);
  FitScore s;
  s.multi_mape_percent = mean_absolute_percentage_error(multi_rows);
  s.single_mape_percent = mean_absolute_percentage_error(score_runs(data.single, calibration));
  s.mpt_mape_percent = mean_absolute_percentage_error(score_runs(data.mpt, calibration));
  s.objective = s.multi_mape_percent + s.single_mape_percent + s.mpt_mape_percent +
                4 * (std::max(0.0, s.multi_mape_percent - kMargin * 8) +
                     std::max(0.0, s.single_mape_percent - kMargin * 10) +
                     std::max(0.0, s.mpt_mape_percent - kMargin * 8));
  for (const Ranking& r : rankings(multi_rows)) {
    s.ranking_slowdown_percent.push_back(100 * r.slowdown());
    s.objective += std::max(0.0, 100 * r.slowdown() - 2);
  }
  return s;
}

FitResult fit_calibration(const FitData& data, const Calibration& start,
                          const FitSettings& settings) {
  Calibration best = start;
  // Two tiers (NVLink, InfiniBand) at least for the per-tier efficiencies.
  if (best.collective_efficiency.size() < 2)
    best.collective_efficiency.resize(2, best.collective_efficiency.back());
  if (best.p2p_efficiency.size() < 2) best.p2p_efficiency.resize(2, best.p2p_efficiency.back());
  std::vector<Bounded> parameters;
  for (const auto& p : fitted_parameters()) {
    const double scale = p.of_start ? p.field(best) : 1.0;
    parameters.push_back({&p, p.low * scale, p.high * scale});
    p.field(best) = parameters.back().clamp(p.field(best));
  }
  FitResult result;
  result.start = best;
  result.before = fit_score(data, best);
  FitScore best_score = result.before;
  Deviates random(settings.seed);
  for (int i = 0; i < settings.iterations; ++i) {
    // Move one to three parameters by a normal step of 3-13 % of their range.
    Calibration trial = best;
    const double scale = 0.1 * (0.3 + random.uniform());
    const std::size_t moves = 1 + random.index(3);
    for (std::size_t k = 0; k < moves; ++k) {
      const Bounded& b = parameters[random.index(parameters.size())];
      double& x = b.parameter->field(trial);
      if (b.parameter->log_scale) {
        x = std::exp(std::log(std::max(x, b.low)) +
                     random.normal() * scale * std::log(b.high / b.low));
      } else {
        x += random.normal() * scale * (b.high - b.low);
      }
      x = b.clamp(x);
    }
    const FitScore s = fit_score(data, trial);
    if (s.objective <= best_score.objective) {  // sideways steps too: plateaus are common
      best = trial;
      best_score = s;
      ++result.accepted;
    }
    if (settings.progress && (i + 1) % 50 == 0)
      settings.progress->report({"calibration fit", double(i + 1), double(settings.iterations),
                                 "steps", best_score.objective,
                                 "(multi MAPE + single MAPE + ranking, %)"});
  }
  result.calibration = best;
  result.after = best_score;
  return result;
}

}  // namespace paraplan::validate
