// Exhaustive enumeration of the knob space (each evaluation is closed-form, a few microseconds).
#include "search/llm.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "ir/error.h"

namespace paraplan {
namespace {

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i != n / i) d.push_back(n / i);
    }
  std::sort(d.begin(), d.end());
  return d;
}

auto order_key(const LlmCandidate& c) {
  const TrainingConfig& t = c.config;
  return std::make_tuple(c.result.iteration_time_s, c.result.memory.peak_bytes, t.tp, t.pp,
                         t.micro_batch,
                         static_cast<int>(t.recompute), t.sequence_parallel, t.zero_stage);
}

}  // namespace

LlmSearchResult search_llm(const AnalyticCostModel& cost, const LlmSearchSettings& s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const TransformerConfig& m = cost.model();
  LlmSearchResult out;
  if (s.devices < 1) throw Error(ErrorKind::kUsage, "", "--devices: expected at least 1");
  if (s.top_k < 1) throw Error(ErrorKind::kUsage, "", "--top: expected at least 1");
  std::vector<LlmCandidate> kept;
  auto keep = [&](LlmCandidate c) {
    kept.push_back(std::move(c));
    if (kept.size() > static_cast<std::size_t>(4 * s.top_k + 64)) {
      std::sort(kept.begin(), kept.end(),
                [](const auto& a, const auto& b) { return order_key(a) < order_key(b); });
      kept.resize(s.top_k);
    }
  };
  // A fixed knob is checked once, with a full message, by evaluating it.
  const std::vector<Recompute> recomputes =
      s.recompute ? std::vector<Recompute>{*s.recompute}
                  : std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  const std::vector<int> zeros = s.zero_stage ? std::vector<int>{*s.zero_stage} : std::vector<int>{0, 1};
  for (std::int64_t tp : divisors(s.devices)) {
    if (s.tp && tp != *s.tp) continue;
    if (!s.tp && m.num_attention_heads % tp) continue;
    for (std::int64_t pp : divisors(s.devices / tp)) {
      if (s.pp && pp != *s.pp) continue;
      if (!s.pp && pp > m.num_layers) continue;
      const std::int64_t dp = s.devices / tp / pp;
      if (s.dp && dp != *s.dp) continue;
      if (!s.dp && s.global_batch % dp) continue;
      const std::vector<std::int64_t> batches =
          s.micro_batch ? std::vector<std::int64_t>{*s.micro_batch}
                        : (s.global_batch % dp ? std::vector<std::int64_t>{}
                                               : divisors(s.global_batch / dp));
      for (std::int64_t b : batches) {
        for (Recompute rc : recomputes) {
          std::vector<bool> sps;
          if (s.sequence_parallel)
            sps = {*s.sequence_parallel};
          else {
            sps = {false};
            if (tp > 1 && s.seq_len % tp == 0) sps.push_back(true);
          }
          for (bool sp : sps)
            for (int zero : zeros) {
              TrainingConfig t;
              t.seq_len = s.seq_len;
              t.global_batch = s.global_batch;
              t.micro_batch = b;
              t.tp = static_cast<int>(tp);
              t.pp = static_cast<int>(pp);
              t.dp = static_cast<int>(dp);
              t.recompute = rc;
              t.sequence_parallel = sp;
              t.zero_stage = zero;
              AnalyticResult r = cost.evaluate(t);
              ++out.evaluated;
              if (!r.fits) {
                ++out.rejected_memory;
              } else {
                keep({t, r});
              }
              if (s.time_limit_s > 0 && (out.evaluated & 255) == 0 &&
                  std::chrono::duration<double>(Clock::now() - start).count() > s.time_limit_s) {
                out.timed_out = true;
                goto done;
              }
            }
        }
      }
    }
  }
done:
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return order_key(a) < order_key(b); });
  if (kept.size() > static_cast<std::size_t>(s.top_k)) kept.resize(s.top_k);
  out.top = std::move(kept);
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (out.evaluated == 0) {
    // Nothing matched the fixed knobs: evaluate them as given to report the broken rule.
    TrainingConfig t;
    t.seq_len = s.seq_len;
    t.global_batch = s.global_batch;
    t.tp = s.tp.value_or(1);
    t.pp = s.pp.value_or(1);
    t.dp = s.dp.value_or(s.devices / std::max(1, t.tp * t.pp));
    t.micro_batch = s.micro_batch.value_or(1);
    if (t.devices() != s.devices)
      throw Error(ErrorKind::kUsage, "",
                  "--devices " + std::to_string(s.devices) + " is not tp × pp × dp = " +
                      std::to_string(t.tp) + " × " + std::to_string(t.pp) + " × " +
                      std::to_string(t.dp));
    cost.check(t);
    throw Error(ErrorKind::kUsage, "",
                "no configuration satisfies the fixed knobs (heads divisible by tp, batch "
                "divisible by micro-batch × dp, at most one stage per layer)");
  }
  return out;
}

}  // namespace paraplan
