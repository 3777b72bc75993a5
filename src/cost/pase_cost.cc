// PaSE's strategy enumeration, vertex costs and edge (redistribution) costs (specs/pase.md §2–3).
#include "cost/pase_cost.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "ir/error.h"

namespace paraplan {
namespace {

std::string layer_place(const Model& m, int v) {
  std::ostringstream s;
  s << "layer " << m.layers[v].id << " (\"" << m.layers[v].name << "\")";
  return s.str();
}

/// Split factor of each tensor dimension under a configuration.
std::vector<int> project(const TensorView& t, const std::vector<int>& c) {
  std::vector<int> p(t.dims.size(), 1);
  for (std::size_t i = 0; i < t.dims.size(); ++i)
    for (int d : t.dims[i]) p[i] *= c[d];
  return p;
}

long product(const std::vector<int>& v) {
  long p = 1;
  for (int x : v) p *= x;
  return p;
}

}  // namespace

PaseCostModel::PaseCostModel(const Model& model, const PaseSettings& settings)
    : model_(model), settings_(settings) {
  if (settings_.devices < 1) throw FieldError("devices", ": expected at least 1 device");
  if (!(settings_.flops_per_s > 0) || !(settings_.bandwidth_bytes_per_s > 0))
    throw FieldError("flops", " and bandwidth must be positive");
  r_ = settings_.flops_per_s / (settings_.bandwidth_bytes_per_s / 8);
  configs_.resize(model_.size());
  for (int v = 0; v < model_.size(); ++v) {
    if (!model_.layers[v].op)
      throw Error(ErrorKind::kInput, "",
                  layer_place(model_, v) +
                      " has no operator description; the pase cost model "
                      "needs an operator graph (built-in, ONNX)");
    enumerate(v);
  }
  // PaSE keeps one flow per (producer, consumer) pair: the consumer's last input from it.
  std::map<std::pair<int, int>, std::vector<Flow>> by_pair;
  for (int v = 0; v < model_.size(); ++v)
    for (int e : model_.in_edge_ids[v]) {
      const Edge& ed = model_.edges[e];
      by_pair[{ed.from, v}].push_back({ed.from, v, ed.from_output, ed.to_input});
    }
  for (auto& [key, fl] : by_pair) {
    std::sort(fl.begin(), fl.end(),
              [](const Flow& a, const Flow& b) { return a.to_input < b.to_input; });
    if (settings_.keep_all_flows)
      flows_.insert(flows_.end(), fl.begin(), fl.end());
    else
      flows_.push_back(fl.back());
  }
  build_network();
}

void PaseCostModel::enumerate(int v) {
  const Operator& op = *model_.layers[v].op;
  const int p = settings_.devices;
  std::vector<std::vector<int>> factors;
  for (const auto& d : op.dims) {
    std::vector<int> f;
    if (d.splittable)
      for (std::int64_t x = 1; x <= std::min<std::int64_t>(d.extent, p); ++x) {
        if (d.extent % x || d.extent / x < settings_.min_block) continue;
        if (settings_.powers_of_two && (x & (x - 1))) continue;
        f.push_back(static_cast<int>(x));
      }
    if (f.empty()) f.push_back(1);
    factors.push_back(std::move(f));
  }
  const bool contiguous = op.kind == OpKind::kRavel || op.kind == OpKind::kUnravel;
  auto& out = configs_[v];
  std::vector<int> c(op.dims.size(), 1);
  const int n = static_cast<int>(op.dims.size());
  // Depth-first over dims, first dim slowest; prune on the device product.
  auto rec = [&](auto&& self, int i, long prod) -> void {
    if (i == n) {
      if (settings_.use_all_devices && prod != p) return;
      if (contiguous) {
        int j = 0;
        while (j < n && c[j] == op.dims[j].extent) ++j;
        for (int k = j + 1; k < n; ++k)
          if (c[k] != 1) return;
      }
      if (static_cast<long>(out.size()) >= settings_.max_configs_per_layer) {
        std::ostringstream s;
        s << layer_place(model_, v) << " has more than " << settings_.max_configs_per_layer
          << " configurations on " << p << " devices; restrict the search (--powers-of-two) or "
          << "use fewer devices";
        throw Error(ErrorKind::kLimit, "", s.str());
      }
      out.push_back(c);
      return;
    }
    for (int f : factors[i]) {
      if (prod * f > p) break;
      c[i] = f;
      self(self, i + 1, prod * f);
    }
    c[i] = 1;
  };
  rec(rec, 0, 1);
  if (out.empty()) {
    std::ostringstream s;
    s << layer_place(model_, v) << " (" << op_kind_name(op.kind) << ", " << op.dims_text()
      << ") has no split over exactly " << p << " devices";
    if (settings_.powers_of_two) s << " by powers of two";
    s << "; drop --all-devices or choose a device count that divides its dimensions";
    throw Error(ErrorKind::kInfeasible, "", s.str());
  }
}

PaseLayerCost PaseCostModel::layer_cost(int v, const std::vector<int>& c) const {
  const Operator& op = *model_.layers[v].op;
  const double r = r_;
  auto W = [r](double words) { return r * words; };
  auto AR = [&](double w, long q) {
    return q == 1 ? 0.0 : W((w / static_cast<double>(q)) * (2.0 * static_cast<double>(q - 1)));
  };
  const int n = static_cast<int>(op.dims.size());
  std::vector<double> dpp(n);
  double e = 1;
  for (int i = 0; i < n; ++i) {
    dpp[i] = static_cast<double>(op.dims[i].extent) / c[i];
    e *= dpp[i];
  }
  PaseLayerCost cost;
  switch (op.kind) {
    case OpKind::kConv:
    case OpKind::kFullyConnected:
    case OpKind::kEinsum:
    case OpKind::kEmbedding:
    case OpKind::kLstm: {
      const GemmView& g = op.gemm;
      auto group = [&](const std::vector<int>& dims, double& size, long& split) {
        std::int64_t s = 1;
        split = 1;
        for (int d : dims) {
          s *= op.dims[d].extent;
          split *= c[d];
        }
        size = static_cast<double>(s);
      };
      double M, N, K;
      long cM, cN, cK;
      group(g.m, M, cM);
      group(g.n, N, cN);
      group(g.k, K, cK);
      N *= static_cast<double>(g.n_scale);
      K *= static_cast<double>(g.k_scale);
      double nb = 1;
      for (int d : g.batch) nb *= static_cast<double>(op.dims[d].extent) / c[d];
      double m = M / cM, nn = N / cN, k = K / cK;
      double compute = m * nn * k * 3;
      if (op.pointwise_ops > 0) compute += 3 * op.pointwise_ops * (m * nn);
      double comm = AR(m * nn, cK) + AR(m * k, cN) + AR(nn * k, cM);
      cost.compute = nb * compute;
      cost.communication = nb * comm;
      if (op.kind == OpKind::kLstm) {
        // Per-step cell reshape (dims L, S, B, N, K).
        double B = static_cast<double>(op.dims[2].extent),
               Nu = static_cast<double>(op.dims[3].extent),
               Ku = static_cast<double>(op.dims[4].extent);
        long cB = c[2], cNu = c[3], cKu = c[4];
        double need = (B / cB) * (Ku / cKu);
        double inter = cB * cKu > cB * cNu ? 0.0 : (B / cB) * std::min(Nu / cNu, Ku / cKu);
        double steps = static_cast<double>(op.dims[0].extent * op.dims[1].extent);
        cost.communication += steps * W(std::max(0.0, need - inter));
      }
      break;
    }
    case OpKind::kPooling: {
      const TensorView& in = op.inputs.empty() ? op.outputs[0] : op.inputs[0];
      double b = static_cast<double>(op.dims[0].extent) / c[0];
      double C = static_cast<double>(op.dims[1].extent) / c[1];
      double H = static_cast<double>(in.shape[2]) / c[2];
      double Wd = static_cast<double>(in.shape[3]) / c[3];
      double halo = (H + (c[2] > 1 ? static_cast<double>(op.window_rows) : 0.0)) *
                        (Wd + (c[3] > 1 ? static_cast<double>(op.window_cols) : 0.0)) -
                    H * Wd;
      cost.compute = e;
      cost.communication = W(b * C * halo);
      break;
    }
    case OpKind::kElementwise:
      cost.compute = (1 + op.pointwise_ops) * e;
      break;
    case OpKind::kNorm: {
      int a = op.axis;
      long others = 1;
      for (int i = 0; i < n; ++i)
        if (i != a) others *= c[i];
      cost.compute = 16 * e;
      cost.communication = 4 * AR(e / dpp[a], c[a]) + 4 * AR(dpp[a], others);
      break;
    }
    case OpKind::kSoftmax: {
      int a = op.axis;
      double ep = 1;
      for (int i = 0; i < n; ++i)
        if (i != a) ep *= dpp[i];
      double da = static_cast<double>(op.dims[a].extent);
      cost.compute = 4 * e + e * da;
      cost.communication = AR(ep, c[a]) + AR(ep * da, c[a]) + AR(ep, c[a]);
      break;
    }
    case OpKind::kSoftmaxCrossEntropy: {
      double bs = 1;
      for (int i = 0; i + 1 < n; ++i) bs *= dpp[i];
      cost.compute = 4 * e + bs + bs;
      cost.communication = c[n - 1] > 1 ? W(2 * bs) : 0.0;
      break;
    }
    case OpKind::kReduceMean: {
      long q = 1;
      for (int a : op.reduce_axes) q *= c[a];
      cost.communication = AR(e, q);
      break;
    }
    case OpKind::kConcat:
    case OpKind::kSplit:
    case OpKind::kStack:
    case OpKind::kUnstack:
    case OpKind::kRavel:
    case OpKind::kUnravel:
    case OpKind::kTranspose:
      break;
  }
  return cost;
}

namespace {

/// Redistribution cost (FLOP-equivalents) of a tensor of `shape` split `a` ways per dimension by
/// its producer and `b` ways by its consumer: the words a device needs and does not hold,
/// counted twice.
double redistribution(double r, const std::vector<std::int64_t>& shape, const int* a,
                      const int* b) {
  const std::size_t n = shape.size();
  double need = 1, inter = 1;
  long pa = 1, pb = 1;
  for (std::size_t i = 0; i < n; ++i) {
    need *= static_cast<double>(shape[i]) / b[i];
    pa *= a[i];
    pb *= b[i];
  }
  if (pb > pa) {
    inter = 0;
  } else {
    for (std::size_t i = 0; i < n; ++i)
      inter *= std::min(static_cast<double>(shape[i]) / b[i], static_cast<double>(shape[i]) / a[i]);
  }
  return r * (std::max(0.0, need - inter) * 2);
}

}  // namespace

double PaseCostModel::flow_cost(int u, int out, const std::vector<int>& cu, int v, int in,
                                const std::vector<int>& cv) const {
  const TensorView& tv = model_.layers[v].op->inputs[in];
  std::vector<int> a = project(model_.layers[u].op->outputs[out], cu);
  std::vector<int> b = project(tv, cv);
  return redistribution(r_, tv.shape, a.data(), b.data());
}

void PaseCostModel::build_network() {
  const int n = model_.size();
  network_.unary.assign(n, {});
  for (int v = 0; v < n; ++v) {
    auto& u = network_.unary[v];
    u.reserve(configs_[v].size());
    for (const auto& c : configs_[v]) {
      PaseLayerCost lc = layer_cost(v, c);
      u.push_back(lc.compute + lc.communication);
    }
  }
  // Group flows by (from, to); classes are the distinct projections onto the flows' tensors.
  std::map<std::pair<int, int>, std::vector<const Flow*>> pairs;
  for (const auto& f : flows_) pairs[{f.from, f.to}].push_back(&f);
  // Pairs whose tensors and class projections are the same (a model repeats its blocks) have the
  // same table: computed once.
  using TableKey = std::tuple<std::vector<std::vector<std::int64_t>>, std::vector<std::vector<int>>,
                              std::vector<std::vector<int>>>;
  std::map<TableKey, std::shared_ptr<const std::vector<double>>> tables;
  for (const auto& entry : pairs) {
    const std::vector<const Flow*>& fl = entry.second;  // named, not bound: lambdas capture it
    auto [u, v] = entry.first;
    PairFactor pf;
    pf.u = u;
    pf.v = v;
    // Per class, its projections onto the flows' tensors, one after the other.
    auto classes = [&](int w, bool producer, std::vector<int>& cls,
                       std::vector<std::vector<int>>& sigs) {
      std::map<std::vector<int>, int> ids;
      for (std::size_t k = 0; k < configs_[w].size(); ++k) {
        std::vector<int> sig;
        for (const Flow* f : fl) {
          const TensorView& t = producer ? model_.layers[w].op->outputs[f->from_output]
                                         : model_.layers[w].op->inputs[f->to_input];
          auto p = project(t, configs_[w][k]);
          sig.insert(sig.end(), p.begin(), p.end());
        }
        auto [it, fresh] = ids.emplace(sig, static_cast<int>(sigs.size()));
        if (fresh) sigs.push_back(std::move(sig));
        cls.push_back(it->second);
      }
    };
    TableKey key;
    auto& [shapes, sig_u, sig_v] = key;
    for (const Flow* f : fl) shapes.push_back(model_.layers[v].op->inputs[f->to_input].shape);
    classes(u, true, pf.u_class, sig_u);
    classes(v, false, pf.v_class, sig_v);
    pf.u_classes = static_cast<int>(sig_u.size());
    pf.v_classes = static_cast<int>(sig_v.size());
    auto [table, fresh] = tables.try_emplace(std::move(key));
    if (fresh) {
      const auto& [shapes_k, su, sv] = table->first;
      auto cost = std::make_shared<std::vector<double>>(static_cast<std::size_t>(pf.u_classes) *
                                                        pf.v_classes);
      for (int a = 0; a < pf.u_classes; ++a)
        for (int b = 0; b < pf.v_classes; ++b) {
          double c = 0;
          std::size_t at = 0;
          for (const auto& shape : shapes_k) {
            c += redistribution(r_, shape, su[a].data() + at, sv[b].data() + at);
            at += shape.size();
          }
          (*cost)[static_cast<std::size_t>(a) * pf.v_classes + b] = c;
        }
      table->second = std::move(cost);
    }
    pf.cost = table->second;  // shared
    network_.pairs.push_back(std::move(pf));
  }
}

double PaseCostModel::evaluate(const std::vector<int>& choice) const {
  double total = 0;
  for (int v = 0; v < model_.size(); ++v) {
    PaseLayerCost lc = layer_cost(v, configs_[v][choice[v]]);
    total += lc.compute + lc.communication;
  }
  for (const auto& f : flows_)
    total += flow_cost(f.from, f.from_output, configs_[f.from][choice[f.from]], f.to, f.to_input,
                       configs_[f.to][choice[f.to]]);
  return total;
}

MemoryBreakdown PaseCostModel::layer_memory(int v, const std::vector<int>& config) const {
  const Operator& op = *model_.layers[v].op;
  auto shard = [&](const TensorView& t) {
    const std::vector<int> parts = project(t, config);
    double elements = 1;
    for (std::size_t i = 0; i < t.shape.size(); ++i)
      elements *= static_cast<double>((t.shape[i] + parts[i] - 1) / parts[i]);
    return elements;
  };
  const double b = settings_.bytes_per_element;
  MemoryBreakdown m;
  double parameters = 0;
  for (const TensorView& w : op.weights) parameters += shard(w);
  m.weights_bytes = b * parameters;
  m.gradients_bytes = b * parameters;
  m.optimizer_bytes = settings_.optimizer_bytes_per_parameter * parameters;
  double activations = 0;
  for (const TensorView& out : op.outputs) activations += shard(out);
  std::vector<char> fed(op.inputs.size(), 0);
  for (int e : model_.in_edge_ids[v]) {
    const int input = model_.edges[e].to_input;
    if (input >= 0 && input < static_cast<int>(fed.size())) fed[input] = 1;
  }
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (!fed[i]) activations += shard(op.inputs[i]);
  m.activations_bytes = b * activations;
  m.peak_bytes = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes;
  return m;
}

IntraOpResources PaseCostModel::resources() const {
  IntraOpResources r;
  for (int v = 0; v < model_.size(); ++v) {
    r.memory_bytes.emplace_back();
    r.devices.emplace_back();
    for (const auto& c : configs_[v]) {
      r.memory_bytes.back().push_back(layer_memory(v, c).peak_bytes);
      r.devices.back().push_back(static_cast<int>(product(c)));
    }
  }
  return r;
}

Plan PaseCostModel::to_plan(const std::vector<int>& choice) const {
  Plan plan = Plan::of(PlanKind::kIntraOp);
  IntraOpDetail& detail = plan.as<IntraOpDetail>();
  plan.feasible = true;
  plan.schedule = Schedule::kLayerByLayer;
  for (int v = 0; v < model_.size(); ++v) {
    LayerSplit ls;
    ls.layer = v;
    ls.split = configs_[v][choice[v]];
    ls.devices = static_cast<int>(product(ls.split));
    PaseLayerCost lc = layer_cost(v, ls.split);
    ls.compute = lc.compute;
    ls.communication = lc.communication;
    plan.devices_used = std::max(plan.devices_used, ls.devices);
    detail.layer_splits.push_back(std::move(ls));
  }
  for (const auto& f : flows_)
    detail.layer_splits[f.to].redistribution +=
        flow_cost(f.from, f.from_output, configs_[f.from][choice[f.from]], f.to, f.to_input,
                  configs_[f.to][choice[f.to]]);
  plan.objective = evaluate(choice);
  detail.step_time_s = plan.objective / settings_.flops_per_s;
  return plan;
}

}  // namespace paraplan
