#include "ir/plan.h"

namespace paraplan {

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
  plan.kind = kind;
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

}  // namespace paraplan
