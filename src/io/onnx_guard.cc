// What libonnx 1.12's shape inference reads without checking, and the checks made for it here:
// - every node: its operator's schema (attribute names and types, input and output counts), and
//   strides, dilations, kernel sizes, groups and block sizes above zero (a zero divides);
// - Conv, ConvInteger, QLinearConv without kernel_shape take the kernel from the weight's shape
//   and index the input's spatial sizes, strides and dilations by it: the weight must have the
//   rank of the input (ONNX's definition asks as much);
// - ConvTranspose reads the weight's dimension 1, and, without kernel_shape, its spatial sizes
//   by the input's: rank at least 2, and the input's without kernel_shape;
// - MaxUnpool with two inputs reads dimension 1 of the indices: their shape must be known, rank
//   at least 2.
// The ranks are the ones libonnx will see at the node: a declared type (value_info, then graph
// input, then graph output, the last one winning; initializers where IR >= 4 and not declared),
// merged with what inference made of the nodes before. For a node whose input an earlier node
// makes, inference is run on the graph up to that node, whose nodes have all passed these checks
// (in a child process, as every inference: onnx_infer).
#include "io/onnx_guard.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>

#include "io/json_fields.h"
#include "io/onnx_infer.h"
#include "ir/error.h"

namespace paraplan::io {
namespace {

bool default_domain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

std::string label(const onnx::NodeProto& n, int index) {
  return fmt::format("node {} \"{}\" ({})", index, utf8_or_replaced(n.name()),
                     utf8_or_replaced(n.op_type()));
}

bool has_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return true;
  return false;
}

/// The operators whose inference reads a second input's shape unchecked: input index of the
/// data (always 0) and of the weight or indices.
int kernel_input(const onnx::NodeProto& n) {
  if (!default_domain(n)) return -1;
  const std::string& op = n.op_type();
  if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose" || op == "MaxUnpool") return 1;
  if (op == "QLinearConv") return 3;
  return -1;
}

/// Schema and positive sizes, for every node of `graph` and of its subgraphs; a kernel operator
/// inside a subgraph is refused (paraplan plans no control flow, and its ranks are not followed
/// there).
void check_attributes(const onnx::GraphProto& graph, std::int64_t opset, bool subgraph,
                      const std::string& path) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    if (default_domain(n)) {
      if (const onnx::OpSchema* schema =
              onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), ""))
        try {
          schema->Verify(n);
        } catch (const std::exception& e) {
          throw Error(ErrorKind::kInput, path,
                      fmt::format("{} breaks its operator's definition: {}", label(n, i),
                                  utf8_or_replaced(e.what())));
        }
    }
    if (subgraph && kernel_input(n) >= 0)
      throw Error(ErrorKind::kInput, path,
                  fmt::format("{} is inside a subgraph (of a control-flow node or a function); "
                              "paraplan reads convolutions and unpooling only in the main graph",
                              label(n, i)));
    for (const auto& a : n.attribute()) {
      const std::string& k = a.name();
      if (k != "strides" && k != "dilations" && k != "kernel_shape" && k != "group" &&
          k != "blocksize")
        continue;
      bool positive = a.i() > 0 || a.type() == onnx::AttributeProto::INTS;
      for (std::int64_t v : a.ints()) positive = positive && v > 0;
      if (!positive)
        throw Error(ErrorKind::kInput, path,
                    fmt::format("{}: attribute {} must be positive", label(n, i), k));
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) check_attributes(a.g(), opset, true, path);
      for (const auto& g : a.graphs()) check_attributes(g, opset, true, path);
    }
  }
}

/// The type libonnx's inference holds for each name before it visits the next node of `m`.
std::map<std::string, const onnx::TypeProto*> visible_types(const onnx::ModelProto& m) {
  std::map<std::string, const onnx::TypeProto*> types;
  const onnx::GraphProto& g = m.graph();
  for (const auto* list : {&g.value_info(), &g.input(), &g.output()})
    for (const auto& v : *list)
      if (v.has_type()) types[v.name()] = &v.type();
  if (m.ir_version() >= 4)
    for (const auto& t : g.initializer())
      if (!types.count(t.name())) types[t.name()] = nullptr;  // its dims, see rank_of
  return types;
}

/// The rank libonnx reads for `name`, or -1 when it sees no shape (and skips the node).
int rank_of(const onnx::ModelProto& m, const std::map<std::string, const onnx::TypeProto*>& types,
            const std::string& name) {
  if (name.empty()) return -1;
  auto it = types.find(name);
  if (it == types.end()) return -1;
  if (!it->second) {
    for (const auto& t : m.graph().initializer())
      if (t.name() == name) return t.dims_size();
    return -1;
  }
  if (!onnx::hasShape(*it->second)) return -1;
  // A shaped sequence or optional is read as a tensor of rank 0 by the operators checked here.
  return it->second->has_tensor_type() ? it->second->tensor_type().shape().dim_size() : 0;
}

void check_kernel_node(const onnx::NodeProto& n, int index, int x_rank, int w_rank,
                       const std::string& path) {
  const int w = kernel_input(n);
  const std::string& op = n.op_type();
  const std::string& w_name = n.input(w);
  const std::string role = op == "MaxUnpool" ? "indices" : "weight";
  auto refuse = [&](const std::string& what) {
    throw Error(ErrorKind::kInput, path, fmt::format("{}: {}", label(n, index), what));
  };
  if (op == "ConvTranspose" && w_rank >= 0 && w_rank < 2)
    refuse(
        fmt::format("its weight \"{}\" has rank {}; a transposed convolution's weight has "
                    "rank 2 or more",
                    utf8_or_replaced(w_name), w_rank));
  if (x_rank < 2) return;  // libonnx refuses it, or skips the node, on its own
  if (op == "MaxUnpool") {
    if (n.input_size() != 2 || !has_attribute(n, "kernel_shape")) return;
    if (w_rank < 2)
      refuse(
          fmt::format("the shape of its indices \"{}\" is {}; MaxUnpool needs indices of "
                      "rank 2 or more whose shape is known",
                      utf8_or_replaced(w_name), w_rank < 0 ? "unknown" : "of rank < 2"));
    return;
  }
  if (w_rank < 0) return;
  if (w_rank != x_rank && !has_attribute(n, "kernel_shape"))
    refuse(fmt::format(
        "its {} \"{}\" has rank {} but its input \"{}\" has rank {}; the {} of "
        "{} has the rank of its input (or give kernel_shape)",
        role, utf8_or_replaced(w_name), w_rank, utf8_or_replaced(n.input(0)), x_rank, role, op));
}

/// The inputs whose ranks libonnx relies on at a kernel node: the data and the weight (or
/// indices) where the kernel comes from the weight, only the weight of a ConvTranspose that has
/// kernel_shape, none for the other convolutions that have it.
std::set<std::string> needed_ranks(const onnx::NodeProto& n) {
  const int w = kernel_input(n);
  const bool kernel_given = has_attribute(n, "kernel_shape");
  if (n.op_type() == "MaxUnpool" || !kernel_given) return {n.input(0), n.input(w)};
  if (n.op_type() == "ConvTranspose") return {n.input(w)};
  return {};
}

/// `m` without the values of its floating-point initializers, which cannot change a rank that
/// inference finds (integer ones can: a Squeeze's axes, a Reshape's target).
onnx::ModelProto without_weights(const onnx::ModelProto& m) {
  onnx::ModelProto copy;
  *copy.mutable_opset_import() = m.opset_import();
  copy.set_ir_version(m.ir_version());
  *copy.mutable_functions() = m.functions();
  onnx::GraphProto& g = *copy.mutable_graph();
  const onnx::GraphProto& from = m.graph();
  *g.mutable_node() = from.node();
  *g.mutable_input() = from.input();
  *g.mutable_output() = from.output();
  *g.mutable_value_info() = from.value_info();
  for (const auto& t : from.initializer()) {
    onnx::TensorProto* c = g.add_initializer();
    const auto type = t.data_type();
    if (type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32) {
      *c = t;
      continue;
    }
    c->set_name(t.name());
    c->set_data_type(type);
    *c->mutable_dims() = t.dims();
  }
  return copy;
}

/// Main-graph kernel nodes, in order, with the ranks their inputs will have when libonnx gets to
/// them.
void check_kernel_ranks(const onnx::ModelProto& m, const std::string& path) {
  const onnx::GraphProto& g = m.graph();
  std::optional<onnx::ModelProto> lean;  // m without float weights, made on first need
  onnx::ModelProto inferred;             // lean with the nodes before `cut`, shapes inferred
  const onnx::ModelProto* seen = &m;
  auto types = visible_types(m);
  int cut = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    const int w = kernel_input(n);
    if (w < 0 || n.input_size() <= w) continue;
    const std::set<std::string> wanted = needed_ranks(n);
    if (wanted.empty()) continue;
    bool made_since_cut = false;
    for (int j = cut; j < i && !made_since_cut; ++j)
      for (const auto& o : g.node(j).output()) made_since_cut = made_since_cut || wanted.count(o);
    if (made_since_cut) {
      if (!lean) lean = without_weights(m);
      inferred = *lean;
      inferred.mutable_graph()->mutable_node()->DeleteSubrange(i, g.node_size() - i);
      infer_shapes_isolated(inferred, path);
      seen = &inferred;
      types = visible_types(inferred);
      cut = i;
    }
    check_kernel_node(n, i, rank_of(*seen, types, n.input(0)), rank_of(*seen, types, n.input(w)),
                      path);
  }
}

}  // namespace

void check_before_shape_inference(const onnx::ModelProto& model, std::int64_t opset,
                                  const std::string& path) {
  check_attributes(model.graph(), opset, false, path);
  for (const auto& f : model.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = f.node();
    check_attributes(body, opset, true, path);
  }
  check_kernel_ranks(model, path);
}

}  // namespace paraplan::io
