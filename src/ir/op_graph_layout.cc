// Operators that only move data: concat, split, stack, unstack, ravel, unravel, reshape,
// transpose. No cost of their own in PaSE's model; their tensor projections price the moves.
#include <algorithm>

#include "ir/op_graph.h"
#include "ir/op_graph_internal.h"

namespace paraplan {

using namespace op_graph_detail;

OpTensor OpGraphBuilder::transpose(const OpTensor& x, const std::vector<int>& perm,
                                   std::string name) {
  const OpKind kind = OpKind::kTranspose;
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int>(perm.size()) == x.rank();
  for (int i = 0; ok && i < x.rank(); ++i) ok = sorted[i] == i;
  if (!ok)
    fail(kind, name, "the permutation does not match a tensor of rank " + std::to_string(x.rank()));
  Operator op;
  op.kind = kind;
  op.dims = dims_of(x);
  op.inputs = {identity_view(x.shape)};
  TensorView out;
  for (int p : perm) {
    out.shape.push_back(x.shape[p]);
    out.dims.push_back({p});
  }
  op.outputs = {out};
  std::vector<OpTensor> inputs;
  if (x.producer >= 0)
    inputs = {x};
  else
    op.inputs.clear();
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

OpTensor OpGraphBuilder::concat(const std::vector<OpTensor>& xs, int axis, std::string name) {
  const OpKind kind = OpKind::kConcat;
  if (name.empty()) name = default_name(kind);
  if (xs.empty()) fail(kind, name, "needs at least one input");
  for (const auto& x : xs) check_positive(x, kind, name);
  int a = normalise_axis(axis, xs[0].rank(), kind, name);
  std::int64_t total = 0;
  for (const auto& x : xs) {
    bool ok = x.rank() == xs[0].rank();
    for (int i = 0; ok && i < x.rank(); ++i) ok = i == a || x.shape[i] == xs[0].shape[i];
    if (!ok)
      fail(kind, name,
           "inputs " + shape_text(xs[0].shape) + " and " + shape_text(x.shape) +
               " differ outside the axis " + std::to_string(a));
    total += x.shape[a];
  }
  Operator op = axis_collapsed_op(kind, xs[0], a);
  op.inputs.clear();
  for (const auto& x : xs) op.inputs.push_back(identity_view(x.shape));
  auto out_shape = xs[0].shape;
  out_shape[a] = total;
  op.outputs = {identity_view(out_shape)};
  auto inputs = produced_only(op, xs);
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

std::vector<OpTensor> OpGraphBuilder::split(const OpTensor& x, int axis,
                                            const std::vector<std::int64_t>& sizes,
                                            std::string name) {
  const OpKind kind = OpKind::kSplit;
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  int a = normalise_axis(axis, x.rank(), kind, name);
  std::int64_t total = 0;
  for (auto s : sizes) {
    if (s <= 0) fail(kind, name, "split sizes must be positive");
    total += s;
  }
  if (sizes.empty() || total != x.shape[a])
    fail(kind, name,
         "split sizes add up to " + std::to_string(total) + ", not the axis extent " +
             std::to_string(x.shape[a]));
  Operator op = axis_collapsed_op(kind, x, a);
  for (auto s : sizes) {
    auto shape = x.shape;
    shape[a] = s;
    op.outputs.push_back(identity_view(shape));
  }
  auto inputs = produced_only(op, {x});
  return add(std::move(op), std::move(inputs), std::move(name));
}

OpTensor OpGraphBuilder::stack(const std::vector<OpTensor>& xs, int axis, std::string name) {
  const OpKind kind = OpKind::kStack;
  if (name.empty()) name = default_name(kind);
  if (xs.empty()) fail(kind, name, "needs at least one input");
  for (const auto& x : xs) {
    check_positive(x, kind, name);
    if (x.shape != xs[0].shape)
      fail(kind, name,
           "inputs have different shapes " + shape_text(xs[0].shape) + " and " +
               shape_text(x.shape));
  }
  int a = normalise_axis(axis, xs[0].rank() + 1, kind, name);
  Operator op;
  op.kind = kind;
  op.dims = dims_of(xs[0]);
  op.dims.insert(op.dims.begin() + a, IterDim{"s", 1, false});
  TensorView in;
  in.shape = xs[0].shape;
  for (int i = 0; i <= xs[0].rank(); ++i)
    if (i != a) in.dims.push_back({i});
  for (std::size_t i = 0; i < xs.size(); ++i) op.inputs.push_back(in);
  auto out_shape = xs[0].shape;
  out_shape.insert(out_shape.begin() + a, static_cast<std::int64_t>(xs.size()));
  op.outputs = {identity_view(out_shape)};
  op.axis = a;
  auto inputs = produced_only(op, xs);
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

std::vector<OpTensor> OpGraphBuilder::unstack(const OpTensor& x, int axis, std::string name) {
  const OpKind kind = OpKind::kUnstack;
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  int a = normalise_axis(axis, x.rank(), kind, name);
  Operator op = axis_collapsed_op(kind, x, a);
  TensorView out;
  for (int i = 0; i < x.rank(); ++i)
    if (i != a) {
      out.shape.push_back(x.shape[i]);
      out.dims.push_back({i});
    }
  for (std::int64_t i = 0; i < x.shape[a]; ++i) op.outputs.push_back(out);
  auto inputs = produced_only(op, {x});
  return add(std::move(op), std::move(inputs), std::move(name));
}

OpTensor OpGraphBuilder::ravel(const OpTensor& x, std::string name) {
  const OpKind kind = OpKind::kRavel;
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  Operator op = same_shape_op(kind, x);
  TensorView out;
  std::int64_t n = 1;
  std::vector<int> all;
  for (int i = 0; i < x.rank(); ++i) {
    n *= x.shape[i];
    all.push_back(i);
  }
  out.shape = {n};
  out.dims = {all};
  op.outputs = {out};
  auto inputs = produced_only(op, {x});
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

OpTensor OpGraphBuilder::unravel(const OpTensor& x, std::vector<std::int64_t> shape,
                                 std::string name) {
  const OpKind kind = OpKind::kUnravel;
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  std::int64_t n = 1, m = x.elements();
  for (auto e : shape) {
    if (e <= 0)
      fail(kind, name, "target shape " + shape_text(shape) + " has a non-positive extent");
    n *= e;
  }
  if (x.rank() != 1 || n != m)
    fail(kind, name, "cannot unravel " + shape_text(x.shape) + " into " + shape_text(shape));
  Operator op;
  op.kind = kind;
  for (std::size_t i = 0; i < shape.size(); ++i)
    op.dims.push_back({i == 0 ? std::string("b") : numbered('d', i), shape[i], true});
  std::vector<int> all;
  for (std::size_t i = 0; i < shape.size(); ++i) all.push_back(static_cast<int>(i));
  op.inputs = {TensorView{{n}, {all}}};
  op.outputs = {identity_view(shape)};
  auto inputs = produced_only(op, {x});
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

OpTensor OpGraphBuilder::reshape(const OpTensor& x, std::vector<std::int64_t> shape,
                                 std::string name) {
  std::string base = name.empty() ? default_name(OpKind::kRavel) : name;
  OpTensor flat = ravel(x, name.empty() ? std::string() : base + "/ravel");
  return unravel(flat, std::move(shape), name.empty() ? std::string() : base + "/unravel");
}

}  // namespace paraplan
