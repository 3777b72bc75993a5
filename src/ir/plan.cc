#include "ir/plan.h"

#include <algorithm>
#include <type_traits>

namespace paraplan {

// The detail's alternatives follow PlanKind's order: Plan::kind() is the variant's index.
using Detail = decltype(Plan::detail);
template <PlanKind kind, typename T>
constexpr bool kDetailOf =
    std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(kind), Detail>, T>;
static_assert(kDetailOf<PlanKind::kPipeline, PipelineDetail> &&
              kDetailOf<PlanKind::kDapple, DappleDetail> &&
              kDetailOf<PlanKind::kIntraOp, IntraOpDetail> &&
              kDetailOf<PlanKind::kTransformer, TrainingPlan> &&
              kDetailOf<PlanKind::kMixedTransformer, MixedTrainingPlan> &&
              std::variant_size_v<Detail> == std::size(kPlanKinds));

const char* schedule_name(Schedule schedule) {
  switch (schedule) {
    case Schedule::kGpipe:
      return "gpipe";
    case Schedule::kOneFOneB:
      return "1f1b";
    case Schedule::kInterleaved:
      return "interleaved-1f1b";
    case Schedule::kZeroBubble:
      return "zero-bubble";
    case Schedule::kLayerByLayer:
      return "layer-by-layer";
  }
  return "?";
}

namespace {
constexpr Schedule kSchedules[] = {Schedule::kGpipe, Schedule::kOneFOneB, Schedule::kInterleaved,
                                   Schedule::kZeroBubble, Schedule::kLayerByLayer};
}  // namespace

std::string schedule_names() {
  std::string out;
  for (Schedule s : kSchedules) out += (out.empty() ? "" : ", ") + std::string(schedule_name(s));
  return out;
}

std::optional<Schedule> schedule_from_name(std::string_view name) {
  for (Schedule s : kSchedules)
    if (name == schedule_name(s)) return s;
  // Plan files written before the schedule was a closed kind.
  if (name == "1F1B" || name == "DAPPLE (early backward, synchronous)") return Schedule::kOneFOneB;
  if (name == "interleaved 1F1B") return Schedule::kInterleaved;
  if (name == "none") return Schedule::kLayerByLayer;
  return std::nullopt;
}

Schedule parse_schedule(const std::string& name) {
  if (const auto s = schedule_from_name(name)) return *s;
  throw FieldError("schedule", " must be one of " + schedule_names() + " (got \"" + name + "\")");
}

bool schedule_fits(PlanKind kind, Schedule schedule) {
  switch (kind) {
    case PlanKind::kPipeline:
      return schedule == Schedule::kOneFOneB || schedule == Schedule::kGpipe;
    case PlanKind::kDapple:
    case PlanKind::kMixedTransformer:
      return schedule == Schedule::kOneFOneB;
    case PlanKind::kIntraOp:
      return schedule == Schedule::kLayerByLayer;
    case PlanKind::kTransformer:
      return schedule != Schedule::kLayerByLayer;
  }
  return false;
}

std::string schedules_of(PlanKind kind) {
  std::vector<std::string> fits;
  for (Schedule s : kSchedules)
    if (schedule_fits(kind, s)) fits.push_back(schedule_name(s));
  std::string out;
  for (std::size_t i = 0; i < fits.size(); ++i)
    out += (i == 0 ? "" : i + 1 == fits.size() ? " or " : ", ") + fits[i];
  return out;
}

std::optional<PlanKind> plan_kind(std::string_view planner, std::string_view cost_model) {
  for (PlanKind k : kPlanKinds)
    if (planner == planner_name(k) && cost_model == cost_model_name(k)) return k;
  return std::nullopt;
}

const char* planner_name(PlanKind kind) {
  switch (kind) {
    case PlanKind::kPipeline:
    case PlanKind::kDapple:
      return "pipeline";
    case PlanKind::kIntraOp:
      return "intra-op";
    case PlanKind::kTransformer:
      return "llm";
    case PlanKind::kMixedTransformer:
      return "llm-mixed";
  }
  return "?";
}

const char* cost_model_name(PlanKind kind) {
  switch (kind) {
    case PlanKind::kPipeline:
      return "piper";
    case PlanKind::kDapple:
      return "dapple";
    case PlanKind::kIntraOp:
      return "pase";
    case PlanKind::kTransformer:
    case PlanKind::kMixedTransformer:
      return "analytic";
  }
  return "?";
}

Plan Plan::of(PlanKind kind) {
  Plan plan;
  switch (kind) {
    case PlanKind::kPipeline:
      plan.detail = PipelineDetail{};
      break;
    case PlanKind::kDapple:
      plan.detail = DappleDetail{};
      break;
    case PlanKind::kIntraOp:
      plan.detail = IntraOpDetail{};
      break;
    case PlanKind::kTransformer:
      plan.detail = TrainingPlan{};
      break;
    case PlanKind::kMixedTransformer:
      plan.detail = MixedTrainingPlan{};
      break;
  }
  return plan;
}

std::vector<RankPlace> rank_layout(const Plan& plan, const std::string& place) {
  std::vector<RankPlace> placed;
  int count = 0;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const Stage& st = plan.stages[s];
    const std::vector<int>& named = st.device_ids;
    if (!named.empty() && static_cast<int>(named.size()) != st.devices())
      throw Error(ErrorKind::kInput, place,
                  "stage " + std::to_string(s) + " names " + std::to_string(named.size()) +
                      " devices for " + std::to_string(st.data_parallel) + " x " +
                      std::to_string(st.tensor_parallel) + " (data x tensor parallel)");
    int i = 0;
    for (int r = 0; r < st.data_parallel; ++r)
      for (int k = 0; k < st.tensor_parallel; ++k, ++i)
        placed.push_back({static_cast<int>(s), r, k,
                          named.empty() ? count + i : named[static_cast<std::size_t>(i)]});
    count += st.devices();
  }
  // Rank i runs on the i-th smallest device: order by device, each named once.
  std::stable_sort(placed.begin(), placed.end(),
                   [](const RankPlace& a, const RankPlace& b) { return a.device < b.device; });
  for (std::size_t i = 0; i < placed.size(); ++i)
    if (placed[i].device < 0 || (i > 0 && placed[i].device == placed[i - 1].device))
      throw Error(ErrorKind::kInput, place,
                  "the plan names device " + std::to_string(placed[i].device) +
                      (placed[i].device < 0 ? ", which is negative" : " twice"));
  return placed;
}

}  // namespace paraplan
