// Helpers shared by the operator constructors (op_graph.cc: compute operators;
// op_graph_layout.cc: operators that only move data). Not part of the IR's interface.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_graph.h"

namespace paraplan::op_graph_detail {

[[noreturn]] void fail(OpKind kind, const std::string& name, const std::string& message);
std::string shape_text(const std::vector<std::int64_t>& shape);
std::string numbered(char prefix, std::size_t i);
/// Dimension names of a tensor (d0, d1, ... where unnamed).
std::vector<std::string> names_of(const OpTensor& t);
/// A view covering iteration dims first..first+rank-1 one to one.
TensorView identity_view(const std::vector<std::int64_t>& shape, int first = 0);
/// Iteration dims named after the tensor's dims.
std::vector<IterDim> dims_of(const OpTensor& t);
int normalise_axis(int axis, int rank, OpKind kind, const std::string& name);
void check_positive(const OpTensor& t, OpKind kind, const std::string& name);
std::int64_t pooled(std::int64_t in, std::int64_t window, std::int64_t stride, std::int64_t pad,
                    OpKind kind, const std::string& name);
/// An operator whose iteration space is x's shape, with x as input and output.
Operator same_shape_op(OpKind kind, const OpTensor& x);
/// Keeps only the inputs produced by layers (graph inputs and weights are not edges).
std::vector<OpTensor> produced_only(Operator& op, const std::vector<OpTensor>& xs);
/// x's iteration space with `axis` collapsed to one unsplittable unit (concat, split, unstack).
Operator axis_collapsed_op(OpKind kind, const OpTensor& x, int axis);

}  // namespace paraplan::op_graph_detail
