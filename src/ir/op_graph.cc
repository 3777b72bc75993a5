// Operator constructors: iteration spaces and tensor projections from input shapes.
#include "ir/op_graph.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

#include "ir/error.h"
#include "ir/op_graph_internal.h"

namespace paraplan {
namespace op_graph_detail {

[[noreturn]] void fail(OpKind kind, const std::string& name, const std::string& message) {
  std::ostringstream s;
  s << op_kind_name(kind) << " layer \"" << name << "\": " << message;
  throw Error(ErrorKind::kInput, "", s.str());
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::ostringstream s;
  s << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ')';
  return s.str();
}

std::string numbered(char prefix, std::size_t i) {
  std::string s(1, prefix);
  s += std::to_string(i);
  return s;
}

std::vector<std::string> names_of(const OpTensor& t) {
  std::vector<std::string> n = t.names;
  n.resize(t.shape.size());
  for (std::size_t i = 0; i < n.size(); ++i)
    if (n[i].empty()) n[i] = numbered('d', i);
  return n;
}

/// A view covering iteration dims first..first+rank-1 one to one.
TensorView identity_view(const std::vector<std::int64_t>& shape, int first) {
  TensorView v;
  v.shape = shape;
  for (std::size_t i = 0; i < shape.size(); ++i) v.dims.push_back({first + static_cast<int>(i)});
  return v;
}

/// Iteration dims named after the tensor's dims.
std::vector<IterDim> dims_of(const OpTensor& t) {
  std::vector<IterDim> d;
  auto names = names_of(t);
  for (int i = 0; i < t.rank(); ++i) d.push_back({names[i], t.shape[i], true});
  return d;
}

int normalise_axis(int axis, int rank, OpKind kind, const std::string& name) {
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    std::ostringstream s;
    s << "axis " << axis << " is out of range for a tensor of rank " << rank;
    fail(kind, name, s.str());
  }
  return a;
}

void check_positive(const OpTensor& t, OpKind kind, const std::string& name) {
  for (auto e : t.shape)
    if (e <= 0)
      fail(kind, name, "input shape " + shape_text(t.shape) + " has a non-positive extent");
}

std::int64_t pooled(std::int64_t in, std::int64_t window, std::int64_t stride, std::int64_t pad,
                    OpKind kind, const std::string& name) {
  if (stride <= 0 || window <= 0 || pad < 0) fail(kind, name, "window and stride must be positive");
  std::int64_t span = in - window + 2 * pad;
  if (span < 0) fail(kind, name, "the window is larger than the padded input");
  return span / stride + 1;
}

Operator same_shape_op(OpKind kind, const OpTensor& x) {
  Operator op;
  op.kind = kind;
  op.dims = dims_of(x);
  op.inputs = {identity_view(x.shape)};
  op.outputs = {identity_view(x.shape)};
  return op;
}
std::vector<OpTensor> produced_only(Operator& op, const std::vector<OpTensor>& xs) {
  std::vector<OpTensor> produced;
  std::vector<TensorView> views;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (xs[i].producer >= 0) {
      produced.push_back(xs[i]);
      views.push_back(op.inputs[i]);
    }
  op.inputs = std::move(views);
  return produced;
}
Operator axis_collapsed_op(OpKind kind, const OpTensor& x, int axis) {
  Operator op;
  op.kind = kind;
  op.dims = dims_of(x);
  op.dims[axis].extent = 1;
  op.dims[axis].splittable = false;
  op.inputs = {identity_view(x.shape)};
  op.axis = axis;
  return op;
}

}  // namespace op_graph_detail

using namespace op_graph_detail;

OpGraphBuilder::OpGraphBuilder(std::string model_name) { model_.name = std::move(model_name); }

OpTensor OpGraphBuilder::input(std::vector<std::int64_t> shape,
                               std::vector<std::string> names) const {
  OpTensor t;
  t.shape = std::move(shape);
  t.names = std::move(names);
  t.names = names_of(t);
  return t;
}

std::string OpGraphBuilder::default_name(OpKind kind) const {
  std::ostringstream s;
  s << op_kind_name(kind) << '_' << model_.size();
  return s.str();
}

std::vector<OpTensor> OpGraphBuilder::add(Operator op, std::vector<OpTensor> inputs,
                                          std::string name) {
  int index = model_.size();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const OpTensor& t = inputs[i];
    if (t.producer < 0) continue;
    Edge e;
    e.from = t.producer;
    e.to = index;
    e.bytes = static_cast<double>(op.inputs[i].elements()) * 4;
    e.from_output = t.output;
    e.to_input = static_cast<int>(i);
    model_.edges.push_back(e);
  }
  std::vector<OpTensor> outs;
  for (std::size_t k = 0; k < op.outputs.size(); ++k) {
    OpTensor t;
    t.producer = index;
    t.output = static_cast<int>(k);
    t.shape = op.outputs[k].shape;
    for (const auto& group : op.outputs[k].dims) {
      std::string n;
      for (int d : group) n += op.dims[d].name;
      t.names.push_back(n.empty() ? "x" : n);
    }
    outs.push_back(std::move(t));
  }
  Layer layer;
  layer.id = index;
  layer.name = std::move(name);
  layer.output_bytes = op.outputs.empty() ? 0 : static_cast<double>(op.outputs[0].elements()) * 4;
  layer.op = std::move(op);
  model_.layers.push_back(std::move(layer));
  return outs;
}

OpTensor OpGraphBuilder::conv(const OpTensor& x, std::int64_t out_channels, std::int64_t r,
                              std::int64_t s, std::int64_t stride_r, std::int64_t stride_c,
                              std::int64_t pad_r, std::int64_t pad_c, int pointwise_ops,
                              std::string name) {
  const OpKind kind = OpKind::kConv;
  if (name.empty()) name = default_name(kind);
  if (x.rank() != 4) fail(kind, name, "expects an input (b, C, H, W), got " + shape_text(x.shape));
  check_positive(x, kind, name);
  if (out_channels <= 0) fail(kind, name, "the number of filters must be positive");
  std::int64_t h = pooled(x.shape[2], r, stride_r, pad_r, kind, name);
  std::int64_t w = pooled(x.shape[3], s, stride_c, pad_c, kind, name);
  Operator op;
  op.kind = kind;
  op.dims = {{"b", x.shape[0], true},  {"C", x.shape[1], true}, {"h", h, false},
             {"w", w, false},          {"r", r, true},          {"s", s, true},
             {"n", out_channels, true}};
  op.inputs = {identity_view(x.shape)};
  op.outputs = {TensorView{{x.shape[0], out_channels, h, w}, {{0}, {6}, {2}, {3}}}};
  op.weights = {TensorView{{out_channels, x.shape[1], r, s}, {{6}, {1}, {4}, {5}}}};
  op.gemm = {{}, {0, 2, 3}, {6}, {1, 4, 5}, 1, 1};
  op.pointwise_ops = pointwise_ops;
  return add(std::move(op), {x}, std::move(name))[0];
}

OpTensor OpGraphBuilder::pooling(const OpTensor& x, std::int64_t r, std::int64_t s,
                                 std::int64_t stride_r, std::int64_t stride_c, std::int64_t pad_r,
                                 std::int64_t pad_c, std::string name) {
  const OpKind kind = OpKind::kPooling;
  if (name.empty()) name = default_name(kind);
  if (x.rank() != 4) fail(kind, name, "expects an input (b, C, H, W), got " + shape_text(x.shape));
  check_positive(x, kind, name);
  std::int64_t h = pooled(x.shape[2], r, stride_r, pad_r, kind, name);
  std::int64_t w = pooled(x.shape[3], s, stride_c, pad_c, kind, name);
  Operator op;
  op.kind = kind;
  op.dims = {{"b", x.shape[0], true}, {"C", x.shape[1], true}, {"h", h, true}, {"w", w, true}};
  op.inputs = {identity_view(x.shape)};
  op.outputs = {identity_view({x.shape[0], x.shape[1], h, w})};
  op.window_rows = r;
  op.window_cols = s;
  return add(std::move(op), {x}, std::move(name))[0];
}

OpTensor OpGraphBuilder::fully_connected(const OpTensor& x, std::int64_t units, int pointwise_ops,
                                         std::string name) {
  const OpKind kind = OpKind::kFullyConnected;
  if (name.empty()) name = default_name(kind);
  if (x.rank() < 2)
    fail(kind, name, "expects an input (batch..., features), got " + shape_text(x.shape));
  check_positive(x, kind, name);
  if (units <= 0) fail(kind, name, "the number of units must be positive");
  const int lead = x.rank() - 1;
  auto names = names_of(x);
  Operator op;
  op.kind = kind;
  for (int i = 0; i < lead; ++i) op.dims.push_back({names[i], x.shape[i], true});
  op.dims.push_back({"n", units, true});
  op.dims.push_back({"k", x.shape[lead], true});
  TensorView in;
  in.shape = x.shape;
  for (int i = 0; i < lead; ++i) in.dims.push_back({i});
  in.dims.push_back({lead + 1});
  TensorView out;
  out.shape.assign(x.shape.begin(), x.shape.end() - 1);
  out.shape.push_back(units);
  for (int i = 0; i <= lead; ++i) out.dims.push_back({i});
  op.inputs = {in};
  op.outputs = {out};
  op.weights = {TensorView{{x.shape[lead], units}, {{lead + 1}, {lead}}}};
  for (int i = 0; i < lead; ++i) op.gemm.m.push_back(i);
  op.gemm.n = {lead};
  op.gemm.k = {lead + 1};
  op.pointwise_ops = pointwise_ops;
  return add(std::move(op), {x}, std::move(name))[0];
}

OpTensor OpGraphBuilder::einsum(const std::string& equation, const OpTensor& a, const OpTensor& b,
                                int pointwise_ops, std::string name) {
  const OpKind kind = OpKind::kEinsum;
  if (name.empty()) name = default_name(kind);
  auto comma = equation.find(',');
  auto arrow = equation.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma)
    fail(kind, name, "equation \"" + equation + "\" is not of the form \"ab,bc->ac\"");
  std::string sa = equation.substr(0, comma), sb = equation.substr(comma + 1, arrow - comma - 1),
              so = equation.substr(arrow + 2);
  auto distinct = [](const std::string& s) {
    std::string t = s;
    std::sort(t.begin(), t.end());
    return std::adjacent_find(t.begin(), t.end()) == t.end() &&
           std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  };
  if (!distinct(sa) || !distinct(sb) || !distinct(so))
    fail(kind, name, "equation \"" + equation + "\": each operand must be distinct letters");
  if (static_cast<int>(sa.size()) != a.rank() || static_cast<int>(sb.size()) != b.rank())
    fail(kind, name,
         "equation \"" + equation + "\" does not match operand shapes " + shape_text(a.shape) +
             " and " + shape_text(b.shape));
  check_positive(a, kind, name);
  check_positive(b, kind, name);
  std::string dom = so;
  for (char c : sa)
    if (so.find(c) == std::string::npos && sb.find(c) != std::string::npos) dom += c;
  for (char c : so)
    if (sa.find(c) == std::string::npos && sb.find(c) == std::string::npos)
      fail(kind, name, std::string("output letter '") + c + "' appears in no operand");
  for (char c : sa + sb)
    if (dom.find(c) == std::string::npos)
      fail(kind, name, std::string("letter '") + c + "' is summed over in one operand only");
  Operator op;
  op.kind = kind;
  for (char c : dom) {
    std::int64_t extent = -1;
    if (auto i = sa.find(c); i != std::string::npos) extent = a.shape[i];
    if (auto i = sb.find(c); i != std::string::npos) {
      if (extent >= 0 && extent != b.shape[i])
        fail(kind, name,
             std::string("letter '") + c + "' has extents " + std::to_string(extent) + " and " +
                 std::to_string(b.shape[i]));
      extent = b.shape[i];
    }
    op.dims.push_back({std::string(1, c), extent, true});
  }
  auto view = [&](const std::string& letters) {
    TensorView v;
    for (char c : letters) {
      int d = static_cast<int>(dom.find(c));
      v.shape.push_back(op.dims[d].extent);
      v.dims.push_back({d});
    }
    return v;
  };
  for (int d = 0; d < static_cast<int>(dom.size()); ++d) {
    char c = dom[d];
    bool in_a = sa.find(c) != std::string::npos, in_b = sb.find(c) != std::string::npos,
         in_o = so.find(c) != std::string::npos;
    if (in_a && in_b && in_o)
      op.gemm.batch.push_back(d);
    else if (in_a && in_b)
      op.gemm.k.push_back(d);
    else if (in_a)
      op.gemm.m.push_back(d);
    else
      op.gemm.n.push_back(d);
  }
  op.outputs = {view(so)};
  std::vector<OpTensor> inputs;
  for (auto [t, letters] : {std::pair<const OpTensor*, std::string>{&a, sa}, {&b, sb}}) {
    if (t->producer < 0) {
      op.weights.push_back(view(letters));  // graph inputs and parameters are not edges
    } else {
      op.inputs.push_back(view(letters));
      inputs.push_back(*t);
    }
  }
  op.pointwise_ops = pointwise_ops;
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

OpTensor OpGraphBuilder::embedding(const OpTensor& tokens, std::int64_t vocab, std::int64_t width,
                                   std::string name) {
  const OpKind kind = OpKind::kEmbedding;
  if (name.empty()) name = default_name(kind);
  check_positive(tokens, kind, name);
  if (vocab <= 0 || width <= 0) fail(kind, name, "vocabulary and width must be positive");
  const int lead = tokens.rank();
  Operator op;
  op.kind = kind;
  op.dims = dims_of(tokens);
  op.dims.push_back({"d", width, true});
  op.dims.push_back({"V", vocab, true});
  TensorView out = identity_view(tokens.shape);
  out.shape.push_back(width);
  out.dims.push_back({lead});
  op.outputs = {out};
  op.weights = {TensorView{{vocab, width}, {{lead + 1}, {lead}}}};
  for (int i = 0; i < lead; ++i) op.gemm.m.push_back(i);
  op.gemm.n = {lead};
  op.gemm.k = {lead + 1};
  std::vector<OpTensor> inputs;
  if (tokens.producer >= 0) {
    op.inputs = {identity_view(tokens.shape)};
    inputs = {tokens};
  }
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

OpTensor OpGraphBuilder::lstm(const OpTensor& x, std::int64_t units, std::int64_t layers,
                              std::string name) {
  const OpKind kind = OpKind::kLstm;
  if (name.empty()) name = default_name(kind);
  if (x.rank() != 3) fail(kind, name, "expects an input (B, S, K), got " + shape_text(x.shape));
  check_positive(x, kind, name);
  if (units <= 0 || layers <= 0) fail(kind, name, "units and layers must be positive");
  if (x.shape[2] != units)
    fail(kind, name,
         "the input width " + std::to_string(x.shape[2]) + " must equal the units " +
             std::to_string(units));
  Operator op;
  op.kind = kind;
  op.dims = {{"L", layers, true},
             {"S", x.shape[1], false},
             {"B", x.shape[0], true},
             {"N", units, true},
             {"K", x.shape[2], true}};
  op.inputs = {TensorView{x.shape, {{2}, {1}, {4}}}};
  op.outputs = {TensorView{{x.shape[0], x.shape[1], units}, {{2}, {1}, {3}}}};
  op.weights = {TensorView{{layers, 4 * units, 2 * x.shape[2]}, {{0}, {3}, {4}}}};
  op.gemm = {{0}, {1, 2}, {3}, {4}, 4, 2};
  op.pointwise_ops = 3;
  return add(std::move(op), {x}, std::move(name))[0];
}

OpTensor OpGraphBuilder::elementwise(const std::vector<OpTensor>& xs, int pointwise_ops,
                                     std::string name) {
  const OpKind kind = OpKind::kElementwise;
  if (name.empty()) name = default_name(kind);
  if (xs.empty() || xs.size() > 2) fail(kind, name, "takes one or two inputs");
  check_positive(xs[0], kind, name);
  Operator op;
  op.kind = kind;
  op.dims = dims_of(xs[0]);
  std::vector<OpTensor> produced;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const OpTensor& x = xs[i];
    TensorView v;
    v.shape = x.shape;
    const int offset = xs[0].rank() - x.rank();
    bool ok = offset >= 0;
    for (int j = 0; ok && j < x.rank(); ++j) {
      std::int64_t full = xs[0].shape[offset + j];
      if (x.shape[j] == full)
        v.dims.push_back({offset + j});
      else if (x.shape[j] == 1)
        v.dims.push_back({});
      else
        ok = false;
    }
    if (!ok)
      fail(kind, name,
           "input shape " + shape_text(x.shape) + " does not broadcast to " +
               shape_text(xs[0].shape));
    if (x.producer >= 0) {
      op.inputs.push_back(std::move(v));
      produced.push_back(x);
    }
  }
  op.outputs = {identity_view(xs[0].shape)};
  op.pointwise_ops = pointwise_ops;
  return add(std::move(op), std::move(produced), std::move(name))[0];
}

OpTensor OpGraphBuilder::along_axis(OpKind kind, const OpTensor& x, int axis, std::string name) {
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  Operator op = same_shape_op(kind, x);
  op.axis = normalise_axis(axis, x.rank(), kind, name);
  auto inputs = produced_only(op, {x});
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

OpTensor OpGraphBuilder::norm(const OpTensor& x, int axis, std::string name) {
  return along_axis(OpKind::kNorm, x, axis, std::move(name));
}

OpTensor OpGraphBuilder::softmax(const OpTensor& x, int axis, std::string name) {
  return along_axis(OpKind::kSoftmax, x, axis, std::move(name));
}

OpTensor OpGraphBuilder::softmax_cross_entropy(const OpTensor& x, std::string name) {
  const OpKind kind = OpKind::kSoftmaxCrossEntropy;
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  if (x.rank() < 1) fail(kind, name, "expects a tensor with a class axis");
  Operator op = same_shape_op(kind, x);
  op.axis = x.rank() - 1;
  auto inputs = produced_only(op, {x});
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

OpTensor OpGraphBuilder::reduce_mean(const OpTensor& x, std::vector<int> axes, std::string name,
                                     bool keepdims) {
  const OpKind kind = OpKind::kReduceMean;
  if (name.empty()) name = default_name(kind);
  check_positive(x, kind, name);
  Operator op = same_shape_op(kind, x);
  for (int& a : axes) a = normalise_axis(a, x.rank(), kind, name);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (axes.empty()) fail(kind, name, "needs at least one axis to reduce");
  TensorView out;
  for (int i = 0; i < x.rank(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i)) {
      out.shape.push_back(x.shape[i]);
      out.dims.push_back({i});
    } else if (keepdims) {
      out.shape.push_back(1);
      out.dims.push_back({});
    }
  op.outputs = {out};
  op.reduce_axes = axes;
  auto inputs = produced_only(op, {x});
  return add(std::move(op), std::move(inputs), std::move(name))[0];
}

Model OpGraphBuilder::finish() {
  model_.index();
  Model m = std::move(model_);
  model_ = Model{};
  return m;
}

}  // namespace paraplan
