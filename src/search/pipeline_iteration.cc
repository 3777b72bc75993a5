#include "search/pipeline_iteration.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "search/ideals.h"

namespace paraplan {
namespace {

class IterationSearch {
 public:
  IterationSearch(const Model& model, const PipelineCostModel& cost, int microbatches,
                  const IterationTime& iteration, const IterationSearchOptions& options)
      : model_(model),
        cost_(cost),
        n_(microbatches),
        iteration_(iteration),
        options_(options),
        lattice_(IdealLattice::build(model, options.max_ideals)),
        cursor_(cost.cursor()),
        shapes_(cost.shapes()),
        left_(cost.device_budgets()),
        devices_left_(cost.max_devices()) {
    const std::vector<int> order = model.topological_order();
    position_.assign(static_cast<std::size_t>(model.size()), 0);
    for (std::size_t i = 0; i < order.size(); ++i)
      position_[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
    members_.reserve(static_cast<std::size_t>(lattice_.count()));
    for (int id = 0; id < lattice_.count(); ++id) members_.push_back(lattice_.members(id));
  }

  IterationSearchResult run(const Plan& seed) {
    result_.exact = options_share_their_parameters(model_);
    bool usable = seed.feasible &&
                  (options_.stages == 0 || static_cast<int>(seed.stages.size()) == options_.stages);
    for (std::size_t i = 0; usable && i < options_.stage_widths.size(); ++i)
      usable = seed.stages[i].data_parallel == options_.stage_widths[i];
    result_.plan = seed;
    result_.iteration_s = result_.seed_iteration_s =
        usable ? iteration_(seed) : std::numeric_limits<double>::infinity();
    result_.plans_replayed += usable ? 1 : 0;
    if (!usable) result_.plan.feasible = false;
    seed_one_stage();
    // A better plan needs a bottleneck below T / N; the seed's is the least there is (the
    // steady-state optimum), so a seed whose iteration is N × its bottleneck — one stage, no
    // exposed tail — is already the answer.
    if (!(seed.objective >= bound() * (1 - 1e-12)) && set_needs()) extend(/*empty ideal*/ 0, 0);
    return std::move(result_);
  }

 private:
  struct Priced {
    int shape;
    int y;
    double cost;
    std::vector<std::pair<int, int>> choice;  // (layer, option) ascending
  };
  struct Chosen {
    const Priced* priced;
    std::vector<int> layers;
  };

  double bound() const { return result_.iteration_s / n_; }

  // The one-stage plans (plain data and tensor parallelism) before the search: their replays
  // tighten the bound at once, and a search the work limit stops never answers worse than them
  // (xlnet-36 on 8 devices: 1.075 with seven stages against 0.897 for plain data parallelism).
  void seed_one_stage() {
    if (options_.stages > 1 || options_.stage_widths.size() > 1) return;
    const int full = lattice_.full();
    std::vector<int> layers;
    bool pointed = false;
    for (int si = 0; si < static_cast<int>(shapes_.size()) && !stopped_; ++si) {
      const StageShape& sh = shapes_[static_cast<std::size_t>(si)];
      if (!options_.stage_widths.empty() && sh.data_parallel != options_.stage_widths[0]) continue;
      const int devices = sh.data_parallel * sh.tensor_parallel;
      if (devices > left_[static_cast<std::size_t>(sh.device_type)] || devices > devices_left_ ||
          sh.data_parallel > cost_.max_data_parallel_sum())
        continue;
      if (!pointed) layers = point_cursor_at(full, 0), pointed = true;
      if (!count_price()) return;
      const double c = cursor_->cost(si, 1, bound());
      if (!(c < bound())) continue;
      const Priced priced{si, 1, c, cursor_->choice(si, 1)};
      chosen_.push_back({&priced, layers});
      complete();
      chosen_.pop_back();
    }
  }

  // Each stage takes its layers' fastest options that fit; the replay is monotone in them when a
  // layer's options on a degree differ only in time and activations (profiles: plain and
  // recomputed), not in the parameters they synchronise or the optimizer step.
  static bool options_share_their_parameters(const Model& m) {
    for (const Layer& layer : m.layers)
      for (const TensorParallelOptions& deg : layer.by_degree)
        for (const LayerOption& o : deg.options)
          if (o.parameter_bytes != deg.options[0].parameter_bytes ||
              o.optimizer_time_s != deg.options[0].optimizer_time_s)
            return false;
    return true;
  }

  bool superset(int k, int j) const {
    if (lattice_.size_of(k) <= lattice_.size_of(j)) return false;
    for (int v : members_[static_cast<std::size_t>(j)])
      if (!lattice_.contains(k, v)) return false;
    return true;
  }

  // The cursor at stage K \ J: K's layers, then J's removed sinks first (J is closed under
  // successors, so each removed layer has none left in the stage).
  std::vector<int> point_cursor_at(int k, int j) {
    cursor_->reset(members_[static_cast<std::size_t>(k)]);
    std::vector<int> gone = members_[static_cast<std::size_t>(j)];
    std::sort(gone.begin(), gone.end(), [&](int a, int b) {
      return position_[static_cast<std::size_t>(a)] > position_[static_cast<std::size_t>(b)];
    });
    for (int v : gone) cursor_->remove(v);
    std::vector<int> stage;
    for (int v : members_[static_cast<std::size_t>(k)])
      if (!lattice_.contains(j, v)) stage.push_back(v);
    return stage;
  }

  // Counts one stage price; false (and the search stops, not proven) past the work limit.
  bool count_price() {
    if (++result_.stage_prices <= options_.max_stage_prices) return true;
    result_.exact = false;
    stopped_ = true;
    return false;
  }

  // need_[K]: the fewest devices on which the layers outside ideal K (the stages still to
  // choose, from K up to the whole model) can be staged with every stage below the bound, each
  // priced at one micro-batch in flight (never above its price at more) and ignoring Σd and
  // device groups: a lower bound, and one for every smaller bound too.
  bool set_needs() {
    const int count = lattice_.count();
    need_.assign(static_cast<std::size_t>(count), kNone);
    need_[static_cast<std::size_t>(lattice_.full())] = 0;
    std::vector<int> by_devices(shapes_.size());
    for (std::size_t i = 0; i < by_devices.size(); ++i) by_devices[i] = static_cast<int>(i);
    std::stable_sort(by_devices.begin(), by_devices.end(), [&](int a, int b) {
      const StageShape& x = shapes_[static_cast<std::size_t>(a)];
      const StageShape& y = shapes_[static_cast<std::size_t>(b)];
      return x.data_parallel * x.tensor_parallel < y.data_parallel * y.tensor_parallel;
    });
    for (int k = count - 2; k >= 0; --k) {
      int& need = need_[static_cast<std::size_t>(k)];
      for (int k2 = k + 1; k2 < count; ++k2) {
        const int rest = need_[static_cast<std::size_t>(k2)];
        if (rest == kNone || !superset(k2, k)) continue;
        bool pointed = false;
        for (int si : by_devices) {
          const StageShape& sh = shapes_[static_cast<std::size_t>(si)];
          const int devices = sh.data_parallel * sh.tensor_parallel;
          if (need != kNone && devices + rest >= need) break;
          if (!pointed) point_cursor_at(k2, k), pointed = true;
          if (!count_price()) return false;
          if (cursor_->cost(si, 1, bound()) < bound()) {
            need = devices + rest;
            break;
          }
        }
      }
    }
    return true;
  }

  std::vector<int> state_key(int j, int dp_after) const {
    std::vector<int> key{j, dp_after, devices_left_,
                         options_.stages > 0 ? static_cast<int>(chosen_.size()) : 0};
    key.insert(key.end(), left_.begin(), left_.end());
    return key;
  }

  // Every stage that can precede the stages chosen so far (which hold the layers of ideal `j`,
  // with Σd = dp_after): its layers K \ J for every ideal K ⊋ J, every shape that fits what is
  // left while the layers before it can still be staged, priced at the in-flight count the later
  // stages fix, kept only below the bound. Returns whether a complete plan below the bound was
  // reached; a state that reached none is dead for every bound no larger (bounds only shrink).
  bool extend(int j, int dp_after) {
    const int depth = static_cast<int>(chosen_.size());  // stages chosen so far
    if (options_.stages > 0 && depth >= options_.stages) return false;
    const std::vector<int> key = state_key(j, dp_after);
    if (const auto it = dead_.find(key); it != dead_.end() && bound() <= it->second) return false;
    bool reached = false;
    for (int k = j + 1; k < lattice_.count() && !stopped_; ++k) {
      if (!superset(k, j)) continue;
      // With a stage count: the last stage to choose takes every layer left, the others not.
      if (options_.stages > 0 && (k == lattice_.full()) != (depth + 1 == options_.stages)) continue;
      std::vector<Priced> priced;
      std::vector<int> layers;
      bool pointed = false;
      // With widths given, the stage chosen now (the depth-th from the end) has its own.
      const int width = options_.stage_widths.empty()
                            ? 0
                            : options_.stage_widths[options_.stage_widths.size() - 1 -
                                                    static_cast<std::size_t>(depth)];
      for (int si = 0; si < static_cast<int>(shapes_.size()); ++si) {
        const StageShape& sh = shapes_[static_cast<std::size_t>(si)];
        if (width > 0 && sh.data_parallel != width) continue;
        const int devices = sh.data_parallel * sh.tensor_parallel;
        if (devices > left_[static_cast<std::size_t>(sh.device_type)] || devices > devices_left_ ||
            dp_after + sh.data_parallel > cost_.max_data_parallel_sum() ||
            need_[static_cast<std::size_t>(k)] > devices_left_ - devices)
          continue;
        if (!pointed) layers = point_cursor_at(k, j), pointed = true;
        const int y = (dp_after + sh.data_parallel + sh.data_parallel - 1) / sh.data_parallel;
        if (!count_price()) return reached;
        const double c = cursor_->cost(si, y, bound());
        if (c < bound()) priced.push_back({si, y, c, cursor_->choice(si, y)});
      }
      for (const Priced& p : priced) {
        if (!(p.cost < bound())) continue;  // the bound shrank since it was priced
        const StageShape& sh = shapes_[static_cast<std::size_t>(p.shape)];
        const int devices = sh.data_parallel * sh.tensor_parallel;
        chosen_.push_back({&p, layers});
        if (k == lattice_.full()) {
          reached = complete() || reached;
        } else {
          left_[static_cast<std::size_t>(sh.device_type)] -= devices;
          devices_left_ -= devices;
          reached = extend(k, dp_after + sh.data_parallel) || reached;
          left_[static_cast<std::size_t>(sh.device_type)] += devices;
          devices_left_ += devices;
        }
        chosen_.pop_back();
        if (stopped_) return reached;
      }
    }
    if (!reached) dead_[key] = bound();
    return reached;
  }

  // A complete plan whose stages are all below the bound: replayed, kept if faster. True (a
  // plan was reached) whatever the replay gives, unless it does not fit.
  bool complete() {
    Plan plan = Plan::of(PlanKind::kPipeline);
    plan.microbatches = n_;
    for (auto it = chosen_.rbegin(); it != chosen_.rend(); ++it) {
      const StageShape& sh = shapes_[static_cast<std::size_t>(it->priced->shape)];
      Stage st;
      for (auto [layer, option] : it->priced->choice) {
        st.layers.push_back(layer);
        st.option_index.push_back(option);
      }
      st.data_parallel = sh.data_parallel;
      st.tensor_parallel = sh.tensor_parallel;
      st.device_type = sh.device_type;
      plan.stages.push_back(std::move(st));
    }
    plan = cost_.evaluate(plan);
    if (!plan.feasible) return false;
    // A replay costs about one stage price per pass it simulates: it counts against the limit.
    result_.stage_prices += static_cast<std::uint64_t>(2 * n_) * plan.stages.size();
    if (result_.stage_prices > options_.max_stage_prices) {
      result_.exact = false;
      stopped_ = true;
      return true;
    }
    const double t = iteration_(plan);
    ++result_.plans_replayed;
    if (t < result_.iteration_s) {
      result_.iteration_s = t;
      result_.plan = std::move(plan);
    }
    return true;
  }

  const Model& model_;
  const PipelineCostModel& cost_;
  const int n_;
  const IterationTime& iteration_;
  const IterationSearchOptions& options_;
  IdealLattice lattice_;
  std::unique_ptr<StageCursor> cursor_;
  const std::vector<StageShape>& shapes_;
  std::vector<int> left_;  // devices left per group
  int devices_left_;
  std::vector<int> position_;  // layer -> its place in a topological order
  std::vector<std::vector<int>> members_;
  std::vector<Chosen> chosen_;  // the stages chosen, last stage first
  static constexpr int kNone = std::numeric_limits<int>::max();
  IterationSearchResult result_;
  bool stopped_ = false;                     // the work limit was reached
  std::vector<int> need_;                    // per ideal: see set_needs
  std::map<std::vector<int>, double> dead_;  // states that reached no plan, with their bound
};

}  // namespace

IterationSearchResult search_pipeline_iteration(const Model& model, const PipelineCostModel& cost,
                                                int microbatches, const IterationTime& iteration,
                                                const Plan& seed,
                                                const IterationSearchOptions& options) {
  IterationSearch search(model, cost, microbatches, iteration, options);
  return search.run(seed);
}

}  // namespace paraplan
