#include "search/llm_frontier.h"

#include <chrono>

#include "ir/error.h"
#include "search/frontier.h"

namespace paraplan {
namespace {

struct Before {
  bool operator()(const LlmCandidate& a, const LlmCandidate& b) const {
    return llm_candidate_before(a, b);
  }
};

}  // namespace

LlmFrontierResult llm_frontier(const AnalyticCostModel& cost, const LlmSearchSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  ParetoSet<LlmCandidate, Before> set;
  LlmFrontierResult out;
  for (int devices = settings.devices; devices >= 1; devices /= 2) {
    LlmSearchSettings s = settings;
    s.devices = devices;
    s.frontier = true;
    s.top_k = 1;
    if (s.dp && devices != settings.devices) break;  // a fixed dp fixes the device count
    try {
      LlmSearchResult r = search_llm(cost, s);
      out.evaluated += r.evaluated;
      for (auto& c : r.frontier)
        set.offer({c.result.iteration_time_s, c.result.memory.peak_bytes, c.config.devices()}, c);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kUsage || devices == settings.devices) throw;
    }
    if (devices % 2) break;
  }
  for (auto& [o, c] : set.sorted()) out.points.push_back(std::move(c));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace paraplan
