// ONNX → operator graph. Nodes are visited in the file's (topological) order; every output is
// either an activation (an OpTensor made by a layer), a constant (initializers, Constant nodes
// and anything computed only from constants or shapes), or poisoned (downstream of an
// unsupported node, so only the root cause is reported).
#include "io/onnx_reader.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "io/json_fields.h"
#include "io/onnx_guard.h"
#include "io/onnx_infer.h"
#include "ir/error.h"
#include "ir/op_graph.h"

namespace paraplan::io {
namespace {

using Shape = std::vector<std::int64_t>;

struct Unsupported {
  std::string reason;
};

std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::int64_t int_attr(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
  const auto* a = attribute(n, name);
  return a ? a->i() : fallback;
}
std::vector<std::int64_t> ints_attr(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attribute(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}
std::string string_attr(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attribute(n, name);
  return a ? a->s() : std::string();
}

/// Known integer values of small constants (Split sizes, ReduceMean axes, Reshape targets).
std::vector<std::int64_t> tensor_ints(const onnx::TensorProto& t) {
  std::vector<std::int64_t> v;
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.int64_data_size()) return {t.int64_data().begin(), t.int64_data().end()};
    const std::string& raw = t.raw_data();
    v.resize(raw.size() / 8);
    if (!v.empty()) std::memcpy(v.data(), raw.data(), v.size() * 8);  // never with a null pointer
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.int32_data_size()) return {t.int32_data().begin(), t.int32_data().end()};
    const std::string& raw = t.raw_data();
    std::vector<std::int32_t> w(raw.size() / 4);
    if (!w.empty()) std::memcpy(w.data(), raw.data(), w.size() * 4);
    v.assign(w.begin(), w.end());
  }
  return v;
}

class Reader {
 public:
  Reader(std::string path, const OnnxOptions& options)
      : path_(std::move(path)), options_(options), g_("") {}

  /// `bytes`: the file's contents; path_ names it in messages.
  OnnxModel read(const std::string& bytes) {
    onnx::ModelProto m;
    if (!m.ParseFromString(bytes))
      throw Error(ErrorKind::kInput, path_, "not an ONNX model (the protobuf does not parse)");
    if (!m.has_graph() || m.graph().node_size() == 0)
      throw Error(ErrorKind::kInput, path_, "the ONNX model has no graph nodes");
    for (const auto& op : m.opset_import())
      if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = op.version();
    // Names become labels in JSON output; protobuf strings need not be UTF-8.
    for (auto& n : *m.mutable_graph()->mutable_node()) n.set_name(utf8_or_replaced(n.name()));
    std::string name = utf8_or_replaced(m.graph().name().empty() ? path_ : m.graph().name());
    g_ = OpGraphBuilder(name);
    fix_inputs(m);
    check_before_shape_inference(m, opset_, path_);
    infer_shapes_isolated(m, path_);
    collect_shapes(m.graph());
    for (const auto& t : m.graph().initializer()) {
      constants_.insert(t.name());
      values_[t.name()] = tensor_ints(t);
      Shape s(t.dims().begin(), t.dims().end());
      shapes_[t.name()] = s;
    }
    for (const auto& i : m.graph().input()) {
      if (constants_.count(i.name())) continue;
      auto it = shapes_.find(i.name());
      if (it == shapes_.end())
        throw Error(ErrorKind::kInput, path_,
                    "graph input \"" + i.name() + "\" has no known tensor shape");
      tensors_[i.name()] = g_.input(it->second);
      if (batch_ == 0 && !it->second.empty()) batch_ = it->second[0];
    }
    for (int i = 0; i < m.graph().node_size(); ++i) visit(m.graph().node(i), i);
    if (!unsupported_.empty()) {
      std::string msg = fmt::format("{} unsupported node{}: ", unsupported_.size(),
                                    unsupported_.size() == 1 ? "" : "s");
      for (std::size_t i = 0; i < unsupported_.size() && i < 12; ++i)
        msg += (i ? "; " : "") + unsupported_[i];
      if (unsupported_.size() > 12) msg += fmt::format("; and {} more", unsupported_.size() - 12);
      throw Error(ErrorKind::kInput, path_, msg);
    }
    if (g_.size() == 0)
      throw Error(ErrorKind::kInput, path_, "the model has no operator to plan (only constants)");
    return {g_.finish(), batch_};
  }

 private:
  void fix_inputs(onnx::ModelProto& m) {
    std::set<std::string> inits;
    for (const auto& t : m.graph().initializer()) inits.insert(t.name());
    for (auto& in : *m.mutable_graph()->mutable_input()) {
      if (inits.count(in.name()) || !in.type().has_tensor_type()) continue;
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < shape->dim_size(); ++d) {
        auto* dim = shape->mutable_dim(d);
        if (dim->has_dim_value() && dim->dim_value() > 0) {
          if (d == 0 && options_.batch > 0) dim->set_dim_value(options_.batch);
          continue;
        }
        if (d == 0 && options_.batch > 0) {
          dim->set_dim_value(options_.batch);
          continue;
        }
        std::string what =
            dim->has_dim_param() ? "symbolic (\"" + dim->dim_param() + "\")" : "unknown";
        throw Error(ErrorKind::kInput, path_,
                    fmt::format("graph input \"{}\" dimension {} is {}; {}", in.name(), d, what,
                                d == 0 ? "give the batch size with --batch"
                                       : "only the leading (batch) dimension may be symbolic"));
      }
    }
  }

  void collect_shapes(const onnx::GraphProto& g) {
    auto take = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
      Shape s;
      for (const auto& d : v.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) return;
        s.push_back(d.dim_value());
      }
      shapes_[v.name()] = s;
    };
    for (const auto& v : g.input()) take(v);
    for (const auto& v : g.value_info()) take(v);
    for (const auto& v : g.output()) take(v);
  }

  Shape shape_of(const std::string& name) const {
    auto it = shapes_.find(name);
    if (it == shapes_.end())
      throw Unsupported{"the shape of \"" + name + "\" is not known after shape inference"};
    return it->second;
  }

  bool is_constant(const std::string& name) const { return name.empty() || constants_.count(name); }
  const OpTensor& act(const std::string& name) const {
    auto it = tensors_.find(name);
    if (it == tensors_.end())
      throw Unsupported{"input \"" + name + "\" comes from an output paraplan does not model"};
    return it->second;
  }

  void visit(const onnx::NodeProto& n, int index) {
    const std::string label =
        n.name().empty() ? fmt::format("node {} (unnamed, {})", index, n.op_type())
                         : fmt::format("node {} \"{}\" ({})", index, n.name(), n.op_type());
    for (const auto& i : n.input())
      if (poisoned_.count(i)) {
        for (const auto& o : n.output()) poisoned_.insert(o);
        return;
      }
    bool all_constant = true;
    for (const auto& i : n.input()) all_constant = all_constant && is_constant(i);
    if (n.op_type() == "Constant" || n.op_type() == "Shape" || n.op_type() == "Size" ||
        (all_constant && n.op_type() != "RandomNormal")) {
      // Folded: weights, shape arithmetic.
      for (const auto& o : n.output()) constants_.insert(o);
      if (n.op_type() == "Constant")
        if (const auto* a = attribute(n, "value"); a && a->has_t())
          values_[n.output(0)] = tensor_ints(a->t());
      return;
    }
    try {
      if (!n.domain().empty() && n.domain() != "ai.onnx")
        throw Unsupported{"operators of domain \"" + n.domain() + "\" are not supported"};
      // What map_node reads without asking (the schema check cannot vouch for an unknown opset).
      static const std::map<std::string, int> two_inputs = {
          {"Conv", 2}, {"Gemm", 2}, {"MatMul", 2}, {"Gather", 2}, {"Einsum", 2}};
      const auto need = two_inputs.find(n.op_type());
      const int inputs = need == two_inputs.end() ? 1 : need->second;
      if (n.input_size() < inputs || n.output_size() < 1)
        throw Unsupported{fmt::format("needs at least {} input(s) and an output, has {} and {}",
                                      inputs, n.input_size(), n.output_size())};
      map_node(n);
    } catch (const Unsupported& u) {
      unsupported_.push_back(label + ": " + u.reason);
      for (const auto& o : n.output()) poisoned_.insert(o);
    } catch (const Error& e) {
      unsupported_.push_back(label + ": " + e.what());
      for (const auto& o : n.output()) poisoned_.insert(o);
    }
  }

  std::vector<std::string> activations(const onnx::NodeProto& n) const {
    std::vector<std::string> a;
    for (const auto& i : n.input())
      if (!is_constant(i)) a.push_back(i);
    return a;
  }

  void set(const onnx::NodeProto& n, const OpTensor& t, int output = 0) {
    if (output >= n.output_size())
      throw Unsupported{fmt::format("the node has no output {}", output)};
    const std::string& name = n.output(output);
    auto it = shapes_.find(name);
    if (it != shapes_.end() && it->second != t.shape)
      throw Unsupported{"paraplan's output shape " + shape_text(t.shape) + " differs from ONNX's " +
                        shape_text(it->second)};
    tensors_[name] = t;
  }

  /// Output 0 is the input re-shaped to the inferred output shape (no layer if it already has it).
  void reshape_to_output(const onnx::NodeProto& n, const OpTensor& x) {
    Shape target = shape_of(n.output(0));
    if (target == x.shape) {
      tensors_[n.output(0)] = x;
      return;
    }
    set(n, g_.reshape(x, target, n.name()));
  }

  void pads_and_strides(const onnx::NodeProto& n, const Shape& x, const Shape& out, std::int64_t kr,
                        std::int64_t kc, std::int64_t& sr, std::int64_t& sc, std::int64_t& pr,
                        std::int64_t& pc) {
    auto strides = ints_attr(n, "strides");
    if (!strides.empty() && (strides.size() != 2 || strides[0] < 1 || strides[1] < 1))
      throw Unsupported{"strides must be two positive integers"};
    sr = strides.size() == 2 ? strides[0] : 1;
    sc = strides.size() == 2 ? strides[1] : 1;
    for (auto d : ints_attr(n, "dilations"))
      if (d != 1) throw Unsupported{"dilated kernels are not supported"};
    std::string auto_pad = string_attr(n, "auto_pad");
    if (auto_pad.empty() || auto_pad == "NOTSET") {
      auto pads = ints_attr(n, "pads");
      if (pads.empty()) pads = {0, 0, 0, 0};
      if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3])
        throw Unsupported{"asymmetric padding is not supported"};
      pr = pads[0];
      pc = pads[1];
    } else if (auto_pad == "VALID") {
      pr = pc = 0;
    } else {
      // SAME_*: the total padding that gives ONNX's output size; must split evenly.
      std::int64_t tr = (out[2] - 1) * sr + kr - x[2], tc = (out[3] - 1) * sc + kc - x[3];
      if (tr < 0) tr = 0;
      if (tc < 0) tc = 0;
      if (tr % 2 || tc % 2) throw Unsupported{"asymmetric SAME padding is not supported"};
      pr = tr / 2;
      pc = tc / 2;
    }
  }

  // One node onto the graph: by its operator type; Unsupported says why not.
  void map_node(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    auto acts = activations(n);
    if (acts.empty()) throw Unsupported{"no activation input"};
    const OpTensor& x = act(acts[0]);
    static const std::set<std::string> unary = {"Relu",
                                                "Sigmoid",
                                                "Tanh",
                                                "Erf",
                                                "Gelu",
                                                "LeakyRelu",
                                                "Elu",
                                                "Selu",
                                                "Softplus",
                                                "Softsign",
                                                "Abs",
                                                "Neg",
                                                "Sqrt",
                                                "Exp",
                                                "Log",
                                                "Clip",
                                                "Dropout",
                                                "PRelu",
                                                "HardSigmoid",
                                                "HardSwish",
                                                "Reciprocal",
                                                "Celu",
                                                "ThresholdedRelu",
                                                "Not",
                                                "Floor",
                                                "Ceil",
                                                "Round",
                                                "Sign",
                                                "Sin",
                                                "Cos",
                                                "Mish"};
    static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow",
                                                 "Max", "Min", "Sum", "Mean"};
    if (op == "Identity" || op == "Cast") {
      tensors_[n.output(0)] = x;
    } else if (unary.count(op)) {
      map_unary(n);
    } else if (binary.count(op)) {
      map_binary(n, acts, x);
    } else if (op == "Conv") {
      map_conv(n, x);
    } else if (op == "MaxPool" || op == "AveragePool") {
      map_pooling(n, x);
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      map_global_pooling(n, x);
    } else if (op == "ReduceMean" || op == "ReduceSum") {
      map_reduce(n, x);
    } else if (op == "Gemm") {
      map_gemm(n, acts, x);
    } else if (op == "MatMul") {
      map_matmul(n, x);
    } else if (op == "Einsum") {
      map_einsum(n);
    } else if (op == "BatchNormalization") {
      if (n.output_size() > 1) {
        for (int i = 1; i < n.output_size(); ++i)
          if (!n.output(i).empty()) constants_.insert(n.output(i));  // running statistics
      }
      set(n, g_.norm(x, 0, n.name()));
    } else if (op == "LayerNormalization") {
      set(n, g_.norm(x, static_cast<int>(int_attr(n, "axis", -1)), n.name()));
      for (int i = 1; i < n.output_size(); ++i)
        if (!n.output(i).empty()) constants_.insert(n.output(i));
    } else if (op == "Softmax" || op == "LogSoftmax") {
      int axis = static_cast<int>(int_attr(n, "axis", opset_ >= 13 ? -1 : 1));
      set(n, g_.softmax(x, axis, n.name()));
    } else if (op == "SoftmaxCrossEntropyLoss") {
      if (x.rank() != 2) throw Unsupported{"only scores of shape (N, C) are supported"};
      g_.softmax_cross_entropy(x, n.name());
      for (const auto& o : n.output()) constants_.insert(o);  // the loss ends the graph
    } else if (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") {
      reshape_to_output(n, x);
    } else if (op == "Transpose") {
      auto perm = ints_attr(n, "perm");
      std::vector<int> p;
      if (perm.empty())
        for (int i = x.rank() - 1; i >= 0; --i) p.push_back(i);
      else
        p.assign(perm.begin(), perm.end());
      set(n, g_.transpose(x, p, n.name()));
    } else if (op == "Concat") {
      map_concat(n, acts);
    } else if (op == "Split") {
      map_split(n, x);
    } else if (op == "Gather") {
      map_gather(n, x);
    } else {
      throw Unsupported{
          "operator type not supported (supported: Conv, MaxPool, AveragePool, "
          "Global*Pool, Gemm, MatMul, Einsum, Gather (embedding), element-wise "
          "ops, BatchNormalization, LayerNormalization, Softmax, ReduceMean, "
          "Reshape/Flatten/Squeeze/Unsqueeze, Transpose, Concat, Split, "
          "SoftmaxCrossEntropyLoss)"};
    }
  }

  void map_unary(const onnx::NodeProto& n) {
    // Input 0 is the data; further inputs (Clip bounds, Dropout ratio) are parameters.
    if (is_constant(n.input(0))) {
      for (const auto& o : n.output()) constants_.insert(o);
      return;
    }
    set(n, g_.elementwise({act(n.input(0))}, 0, n.name()));
    for (int i = 1; i < n.output_size(); ++i)
      if (!n.output(i).empty()) constants_.insert(n.output(i));  // Dropout's mask
  }

  void map_binary(const onnx::NodeProto& n, const std::vector<std::string>& acts,
                  const OpTensor& x) {
    Shape out = x.shape;
    if (shapes_.count(n.output(0)))
      out = shapes_.at(n.output(0));
    else if (acts.size() == 2 && act(acts[1]).rank() > x.rank())
      out = act(acts[1]).shape;
    if (acts.size() == 1) {
      if (x.shape != out)
        throw Unsupported{"a constant operand broadcasts the activation " + shape_text(x.shape) +
                          " to " + shape_text(out)};
      set(n, g_.elementwise({x}, 0, n.name()));
    } else if (acts.size() == 2) {
      const OpTensor& y = act(acts[1]);
      if (x.shape == out)
        set(n, g_.elementwise({x, y}, 0, n.name()));
      else if (y.shape == out)
        set(n, g_.elementwise({y, x}, 0, n.name()));
      else
        throw Unsupported{"both operands broadcast"};
    } else {
      throw Unsupported{"more than two activation operands"};
    }
  }

  void map_conv(const onnx::NodeProto& n, const OpTensor& x) {
    if (x.rank() != 4) throw Unsupported{"only 2-D convolutions (input rank 4) are supported"};
    if (int_attr(n, "group", 1) != 1) throw Unsupported{"grouped convolutions are not supported"};
    if (n.input_size() < 2 || !is_constant(n.input(1)))
      throw Unsupported{"the filter must be a constant"};
    Shape w = shape_of(n.input(1));
    if (w.size() != 4 || w[1] != x.shape[1])
      throw Unsupported{"the filter " + shape_text(w) + " does not fit the input " +
                        shape_text(x.shape)};
    Shape out = shape_of(n.output(0));
    if (out.size() != 4) throw Unsupported{"the output is not 4-D"};
    std::int64_t sr, sc, pr, pc;
    pads_and_strides(n, x.shape, out, w[2], w[3], sr, sc, pr, pc);
    set(n, g_.conv(x, w[0], w[2], w[3], sr, sc, pr, pc, 0, n.name()));
  }

  void map_pooling(const onnx::NodeProto& n, const OpTensor& x) {
    if (x.rank() != 4) throw Unsupported{"only 2-D pooling (input rank 4) is supported"};
    if (n.output_size() > 1 && !n.output(1).empty()) throw Unsupported{"pooling indices output"};
    auto k = ints_attr(n, "kernel_shape");
    if (k.size() != 2) throw Unsupported{"kernel_shape must have two entries"};
    Shape out = shape_of(n.output(0));
    if (out.size() != 4) throw Unsupported{"the output is not 4-D"};
    std::int64_t sr, sc, pr, pc;
    pads_and_strides(n, x.shape, out, k[0], k[1], sr, sc, pr, pc);
    set(n, g_.pooling(x, k[0], k[1], sr, sc, pr, pc, n.name()));
  }

  void map_global_pooling(const onnx::NodeProto& n, const OpTensor& x) {
    if (x.rank() < 3) throw Unsupported{"expects (N, C, spatial...)"};
    std::vector<int> axes;
    for (int i = 2; i < x.rank(); ++i) axes.push_back(i);
    set(n, g_.reduce_mean(x, axes, n.name(), true));
  }

  void map_reduce(const onnx::NodeProto& n, const OpTensor& x) {
    std::vector<std::int64_t> axes = ints_attr(n, "axes");
    if (axes.empty() && n.input_size() > 1) axes = values_[n.input(1)];
    if (axes.empty()) throw Unsupported{"reducing all axes is not supported"};
    set(n,
        g_.reduce_mean(x, {axes.begin(), axes.end()}, n.name(), int_attr(n, "keepdims", 1) != 0));
  }

  void map_gemm(const onnx::NodeProto& n, const std::vector<std::string>& acts, const OpTensor& x) {
    if (int_attr(n, "transA", 0) != 0) throw Unsupported{"transA is not supported"};
    if (acts.size() != 1 || acts[0] != n.input(0) || !is_constant(n.input(1)))
      throw Unsupported{"only activation × constant weight is supported"};
    Shape w = shape_of(n.input(1));
    if (w.size() != 2) throw Unsupported{"the weight " + shape_text(w) + " is not 2-D"};
    std::int64_t units = int_attr(n, "transB", 0) ? w[0] : w[1];
    set(n, g_.fully_connected(x, units, 0, n.name()));
  }

  void map_matmul(const onnx::NodeProto& n, const OpTensor& x) {
    bool a_const = is_constant(n.input(0)), b_const = is_constant(n.input(1));
    Shape sa = a_const ? shape_of(n.input(0)) : act(n.input(0)).shape;
    Shape sb = b_const ? shape_of(n.input(1)) : act(n.input(1)).shape;
    if (b_const && sb.size() == 2 && !a_const) {
      set(n, g_.fully_connected(x, sb[1], 0, n.name()));
    } else {
      if (sa.size() != sb.size() || sa.size() < 2)
        throw Unsupported{"broadcasting MatMul of " + shape_text(sa) + " and " + shape_text(sb)};
      static const std::string letters = "abcdefghij";
      std::size_t r = sa.size();
      if (r > 7) throw Unsupported{"rank above 7"};
      std::string batch = letters.substr(0, r - 2);
      std::string eq = batch + "xy," + batch + "yz->" + batch + "xz";
      OpTensor ta = a_const ? g_.input(sa) : act(n.input(0));
      OpTensor tb = b_const ? g_.input(sb) : act(n.input(1));
      set(n, g_.einsum(eq, ta, tb, 0, n.name()));
    }
  }

  void map_einsum(const onnx::NodeProto& n) {
    if (n.input_size() != 2) throw Unsupported{"only two-operand einsums are supported"};
    std::string eq;
    for (char c : string_attr(n, "equation"))
      if (c != ' ') eq += c;
    if (eq.find("...") != std::string::npos)
      throw Unsupported{"ellipsis einsums are not supported"};
    OpTensor ta = is_constant(n.input(0)) ? g_.input(shape_of(n.input(0))) : act(n.input(0));
    OpTensor tb = is_constant(n.input(1)) ? g_.input(shape_of(n.input(1))) : act(n.input(1));
    set(n, g_.einsum(eq, ta, tb, 0, n.name()));
  }

  void map_concat(const onnx::NodeProto& n, const std::vector<std::string>& acts) {
    if (acts.size() != static_cast<std::size_t>(n.input_size()))
      throw Unsupported{"concatenating constants with activations is not supported"};
    std::vector<OpTensor> xs;
    for (const auto& a : acts) xs.push_back(act(a));
    set(n, g_.concat(xs, static_cast<int>(int_attr(n, "axis", 0)), n.name()));
  }

  void map_split(const onnx::NodeProto& n, const OpTensor& x) {
    int axis = static_cast<int>(int_attr(n, "axis", 0));
    auto sizes = ints_attr(n, "split");
    if (sizes.empty() && n.input_size() > 1 && !n.input(1).empty()) sizes = values_[n.input(1)];
    if (sizes.empty()) {
      for (int i = 0; i < n.output_size(); ++i) {
        Shape s = shape_of(n.output(i));
        int a = axis < 0 ? axis + x.rank() : axis;
        if (a < 0 || a >= static_cast<int>(s.size())) throw Unsupported{"axis out of range"};
        sizes.push_back(s[a]);
      }
    }
    if (static_cast<int>(sizes.size()) != n.output_size())
      throw Unsupported{
          fmt::format("{} split sizes for {} outputs", sizes.size(), n.output_size())};
    auto outs = g_.split(x, axis, sizes, n.name());
    for (int i = 0; i < n.output_size(); ++i) set(n, outs[i], i);
  }

  void map_gather(const onnx::NodeProto& n, const OpTensor& x) {
    if (int_attr(n, "axis", 0) != 0 || !is_constant(n.input(0)) || is_constant(n.input(1)))
      throw Unsupported{"only embedding lookups (constant table, activation indices, axis 0)"};
    Shape table = shape_of(n.input(0));
    if (table.size() != 2) throw Unsupported{"the embedding table must be 2-D"};
    set(n, g_.embedding(x, table[0], table[1], n.name()));
  }

  std::string path_;
  OnnxOptions options_;
  OpGraphBuilder g_;
  std::int64_t opset_ = 13;
  std::int64_t batch_ = 0;
  std::map<std::string, Shape> shapes_;
  std::map<std::string, OpTensor> tensors_;
  std::set<std::string> constants_;
  std::map<std::string, std::vector<std::int64_t>> values_;
  std::set<std::string> poisoned_;
  std::vector<std::string> unsupported_;
};

}  // namespace

OnnxModel read_onnx(const std::string& path, const OnnxOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, path, "cannot open file");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_onnx(bytes, path, options);
}

OnnxModel parse_onnx(const std::string& bytes, const std::string& source,
                     const OnnxOptions& options) {
  return Reader(source, options).read(bytes);
}

}  // namespace paraplan::io
