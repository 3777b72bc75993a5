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
  std::size_t index(std::size_t n) { return std::min(n - 1, static_cast<std::size_t>(uniform() * n)); }

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
      {"gemm_efficiency", 0.5, 0.92, false, [](Calibration& c) -> double& { return c.gemm_efficiency; }},
      {"gemm_half_efficiency_flops", 1e7, 2e9, true,
       [](Calibration& c) -> double& { return c.gemm_half_efficiency_flops; }},
      {"attention_efficiency", 0.2, 0.9, false, [](Calibration& c) -> double& { return c.attention_efficiency; }},
      {"memory_bandwidth_bytes_per_s", 0.5, 1.0, true,
       [](Calibration& c) -> double& { return c.memory_bandwidth_bytes_per_s; }, true},
      // Standard attention's traffic per score, forward: the product written and read back (4),
      // softmax read and written (4), dropout and its mask (5); fused kernels save some.
      {"score_bytes_per_element", 8, 16, false, [](Calibration& c) -> double& { return c.score_bytes_per_element; }},
      {"hidden_bytes_per_element", 0, 100, false, [](Calibration& c) -> double& { return c.hidden_bytes_per_element; }},
      {"layer_overhead_s", 0, 2e-3, false, [](Calibration& c) -> double& { return c.layer_overhead_s; }},
      // NCCL's bus bandwidth stays below the links' nominal rate.
      {"collective_efficiency/0", 0.5, 0.95, false,
       [](Calibration& c) -> double& { return c.collective_efficiency.at(0); }},
      {"collective_efficiency/1", 0.5, 0.95, false,
       [](Calibration& c) -> double& { return c.collective_efficiency.at(1); }},
      {"ring_step_latency_s", 1e-6, 1e-4, true, [](Calibration& c) -> double& { return c.ring_step_latency_s; }},
      {"p2p_efficiency/0", 0.5, 0.95, false, [](Calibration& c) -> double& { return c.p2p_efficiency.at(0); }},
      {"p2p_efficiency/1", 0.5, 0.95, false, [](Calibration& c) -> double& { return c.p2p_efficiency.at(1); }},
      {"p2p_overhead_s", 0, 2e-3, false, [](Calibration& c) -> double& { return c.p2p_overhead_s; }},
      {"iteration_overhead_s", 0, 0.5, false, [](Calibration& c) -> double& { return c.iteration_overhead_s; }},
  };
  return parameters;
}

FitScore fit_score(const std::vector<io::MeasuredRun>& multi, const std::vector<io::MeasuredRun>& single,
                   const Calibration& calibration) {
  const auto multi_rows = score_runs(multi, calibration);
  const auto single_rows = score_runs(single, calibration);
  FitScore s;
  s.multi_mape_percent = mean_absolute_percentage_error(multi_rows);
  s.single_mape_percent = mean_absolute_percentage_error(single_rows);
  s.objective = s.multi_mape_percent + s.single_mape_percent;
  for (const Ranking& r : rankings(multi_rows)) {
    s.ranking_slowdown_percent.push_back(100 * r.slowdown());
    s.objective += std::max(0.0, 100 * r.slowdown() - 2);
  }
  return s;
}

FitResult fit_calibration(const std::vector<io::MeasuredRun>& multi,
                          const std::vector<io::MeasuredRun>& single, const Calibration& start,
                          const FitSettings& settings) {
  Calibration best = start;
  // Two tiers (NVLink, InfiniBand) at least for the per-tier efficiencies.
  if (best.collective_efficiency.size() < 2) best.collective_efficiency.resize(2, best.collective_efficiency.back());
  if (best.p2p_efficiency.size() < 2) best.p2p_efficiency.resize(2, best.p2p_efficiency.back());
  std::vector<Bounded> parameters;
  for (const auto& p : fitted_parameters()) {
    const double scale = p.of_start ? p.field(best) : 1.0;
    parameters.push_back({&p, p.low * scale, p.high * scale});
    p.field(best) = parameters.back().clamp(p.field(best));
  }
  FitResult result;
  result.start = best;
  result.before = fit_score(multi, single, best);
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
        x = std::exp(std::log(std::max(x, b.low)) + random.normal() * scale * std::log(b.high / b.low));
      } else {
        x += random.normal() * scale * (b.high - b.low);
      }
      x = b.clamp(x);
    }
    const FitScore s = fit_score(multi, single, trial);
    if (s.objective <= best_score.objective) {  // sideways steps too: plateaus are common
      best = trial;
      best_score = s;
      ++result.accepted;
    }
    if (settings.progress && (i + 1) % 50 == 0)
      settings.progress->report({"calibration fit", double(i + 1), double(settings.iterations),
                                 "steps", best_score.objective, "(multi MAPE + single MAPE + ranking, %)"});
  }
  result.calibration = best;
  result.after = best_score;
  return result;
}

}  // namespace paraplan::validate
