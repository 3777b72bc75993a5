// ONNX import: Debian's libonnx-testdata models, a ResNet and a transformer encoder built here,
// and bad input.
#include "io/onnx_reader.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "cost/pase_cost.h"
#include "ir/error.h"
#include "search/intra_op.h"

namespace paraplan::io {
namespace {

namespace fs = std::filesystem;

/// Builds ONNX graphs for the tests.
struct OnnxBuilder {
  onnx::ModelProto m;
  int counter = 0;

  explicit OnnxBuilder(int opset = 17) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    m.mutable_graph()->set_name("test");
  }
  std::string input(const std::string& name, const std::vector<std::int64_t>& shape,
                    const std::string& batch_param = "") {
    auto* in = m.mutable_graph()->add_input();
    in->set_name(name);
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (std::size_t i = 0; i < shape.size(); ++i) {
      auto* d = t->mutable_shape()->add_dim();
      if (i == 0 && !batch_param.empty())
        d->set_dim_param(batch_param);
      else
        d->set_dim_value(shape[i]);
    }
    return name;
  }
  std::string weight(const std::vector<std::int64_t>& shape) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w" + std::to_string(counter++));
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t n = 1;
    for (auto d : shape) {
      t->add_dims(d);
      n *= d;
    }
    for (std::int64_t i = 0; i < n; ++i) t->add_float_data(0.01f);
    return t->name();
  }
  std::string ints(const std::vector<std::int64_t>& values) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("c" + std::to_string(counter++));
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
    return t->name();
  }
  onnx::NodeProto* node(const std::string& type, const std::vector<std::string>& inputs,
                        int outputs = 1) {
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type(type);
    n->set_name(type + "_" + std::to_string(counter++));
    for (const auto& i : inputs) n->add_input(i);
    for (int o = 0; o < outputs; ++o) n->add_output(n->name() + ":" + std::to_string(o));
    return n;
  }
  std::string op(const std::string& type, const std::vector<std::string>& inputs) {
    return node(type, inputs)->output(0);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::vector<std::int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  void output(const std::string& name) { m.mutable_graph()->add_output()->set_name(name); }
  std::string save(const std::string& file) {
    fs::path p = fs::temp_directory_path() / file;
    std::ofstream out(p, std::ios::binary);
    m.SerializeToOstream(&out);
    return p.string();
  }
};

std::string conv_bn_relu(OnnxBuilder& b, const std::string& x, std::int64_t cin, std::int64_t cout,
                         std::int64_t k, std::int64_t stride, bool relu = true) {
  auto* c = b.node("Conv", {x, b.weight({cout, cin, k, k})});
  OnnxBuilder::attr(c, "strides", std::vector<std::int64_t>{stride, stride});
  OnnxBuilder::attr(c, "pads", std::vector<std::int64_t>{k / 2, k / 2, k / 2, k / 2});
  std::string y = b.op("BatchNormalization", {c->output(0), b.weight({cout}), b.weight({cout}),
                                              b.weight({cout}), b.weight({cout})});
  return relu ? b.op("Relu", {y}) : y;
}

/// A small ResNet: stem, two stages of two basic blocks each, classifier.
std::string make_resnet(const std::string& file, const std::string& batch_param = "") {
  OnnxBuilder b;
  std::string x = b.input("image", {8, 3, 64, 64}, batch_param);
  x = conv_bn_relu(b, x, 3, 16, 7, 2);
  auto* pool = b.node("MaxPool", {x});
  OnnxBuilder::attr(pool, "kernel_shape", std::vector<std::int64_t>{3, 3});
  OnnxBuilder::attr(pool, "strides", std::vector<std::int64_t>{2, 2});
  OnnxBuilder::attr(pool, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  x = pool->output(0);
  std::int64_t c = 16;
  for (int stage = 0; stage < 2; ++stage) {
    for (int block = 0; block < 2; ++block) {
      std::int64_t out = stage == 0 ? 16 : 32, s = stage > 0 && block == 0 ? 2 : 1;
      std::string y = conv_bn_relu(b, x, c, out, 3, s);
      y = conv_bn_relu(b, y, out, out, 3, 1, false);
      std::string id = x;
      if (s != 1 || c != out) id = conv_bn_relu(b, x, c, out, 1, s, false);
      x = b.op("Relu", {b.op("Add", {y, id})});
      c = out;
    }
  }
  x = b.op("GlobalAveragePool", {x});
  x = b.op("Flatten", {x});
  auto* fc = b.node("Gemm", {x, b.weight({10, c}), b.weight({10})});
  OnnxBuilder::attr(fc, "transB", std::int64_t{1});
  b.output(fc->output(0));
  return b.save(file);
}

/// A transformer encoder layer as PyTorch exports it: projections, head reshapes and
/// transposes, scaled dot-product attention, residuals, layer norms, a GELU MLP.
std::string make_encoder(const std::string& file) {
  const std::int64_t B = 4, S = 32, E = 64, H = 4, D = 16, F = 256;
  OnnxBuilder b;
  std::string x = b.input("tokens", {B, S}, "");
  // Token ids as float inputs are not valid for Gather; start from an embedding output instead.
  b.m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  x = b.op("Gather", {b.weight({1000, E}), x});
  for (int layer = 0; layer < 2; ++layer) {
    auto heads = [&](const std::string& t) {
      std::string r = b.op("Reshape", {t, b.ints({B, S, H, D})});
      auto* tr = b.node("Transpose", {r});
      OnnxBuilder::attr(tr, "perm", std::vector<std::int64_t>{0, 2, 1, 3});
      return tr->output(0);
    };
    std::string q = heads(b.op("Add", {b.op("MatMul", {x, b.weight({E, E})}), b.weight({E})}));
    std::string k = heads(b.op("Add", {b.op("MatMul", {x, b.weight({E, E})}), b.weight({E})}));
    std::string v = heads(b.op("Add", {b.op("MatMul", {x, b.weight({E, E})}), b.weight({E})}));
    auto* kt = b.node("Transpose", {k});
    OnnxBuilder::attr(kt, "perm", std::vector<std::int64_t>{0, 1, 3, 2});
    std::string logits = b.op("Div", {b.op("MatMul", {q, kt->output(0)}), b.weight({1})});
    std::string probs = b.op("Softmax", {logits});
    std::string ctx = b.op("MatMul", {probs, v});
    auto* back = b.node("Transpose", {ctx});
    OnnxBuilder::attr(back, "perm", std::vector<std::int64_t>{0, 2, 1, 3});
    std::string merged = b.op("Reshape", {back->output(0), b.ints({B, S, E})});
    std::string attn = b.op("MatMul", {merged, b.weight({E, E})});
    x = b.op("LayerNormalization", {b.op("Add", {x, attn}), b.weight({E}), b.weight({E})});
    std::string h = b.op("MatMul", {x, b.weight({E, F})});
    // GELU as PyTorch exports it before opset 20: h · 0.5 · (1 + erf(h / √2)).
    std::string e = b.op("Erf", {b.op("Div", {h, b.weight({1})})});
    h = b.op("Mul", {b.op("Mul", {h, b.op("Add", {e, b.weight({1})})}), b.weight({1})});
    h = b.op("MatMul", {h, b.weight({F, E})});
    x = b.op("LayerNormalization", {b.op("Add", {x, h}), b.weight({E}), b.weight({E})});
  }
  b.output(x);
  return b.save(file);
}

double plan_cost(const Model& m, int devices, std::vector<int>* choice = nullptr) {
  PaseSettings s;
  s.devices = devices;
  PaseCostModel cost(m, s);
  auto r = solve_intra_op(cost.network());
  EXPECT_NEAR(cost.evaluate(r.choice), r.objective, 1e-9 * r.objective);
  if (choice) *choice = r.choice;
  return r.objective;
}

TEST(OnnxReader, ReadsAResNetBuiltHere) {
  OnnxModel m = read_onnx(make_resnet("paraplan_resnet.onnx"));
  EXPECT_EQ(m.batch, 8);
  int convs = 0, norms = 0, adds = 0;
  for (const auto& l : m.model.layers) {
    convs += l.op->kind == OpKind::kConv;
    norms += l.op->kind == OpKind::kNorm;
    adds += l.op->kind == OpKind::kElementwise && l.name.rfind("Add", 0) == 0;
  }
  EXPECT_EQ(convs, 10);  // stem + 4 blocks × 2 + one projection shortcut
  EXPECT_EQ(norms, 10);
  EXPECT_EQ(adds, 4);
  double cost = plan_cost(m.model, 4);
  EXPECT_GT(cost, 0);
  EXPECT_LE(cost, plan_cost(m.model, 1));  // more devices never cost more (a layer may use fewer)
}

TEST(OnnxReader, SymbolicBatchNeedsABatchSize) {
  std::string path = make_resnet("paraplan_resnet_sym.onnx", "N");
  try {
    read_onnx(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("--batch"), std::string::npos) << e.what();
  }
  OnnxOptions o;
  o.batch = 32;
  OnnxModel m = read_onnx(path, o);
  EXPECT_EQ(m.batch, 32);
  EXPECT_EQ(m.model.layers[0].op->dims[0].extent, 32);
}

TEST(OnnxReader, ReadsATransformerEncoderBuiltHere) {
  OnnxModel m = read_onnx(make_encoder("paraplan_encoder.onnx"));
  int einsums = 0, fcs = 0, softmax = 0;
  for (const auto& l : m.model.layers) {
    einsums += l.op->kind == OpKind::kEinsum;
    fcs += l.op->kind == OpKind::kFullyConnected;
    softmax += l.op->kind == OpKind::kSoftmax;
  }
  EXPECT_EQ(fcs, 2 * 6);      // q, k, v, output and two MLP projections per layer
  EXPECT_EQ(einsums, 2 * 2);  // QK^T and probs·V per layer
  // The GELU's two-activation Mul is one layer with two incoming flows from the same MatMul's
  // descendants; every layer is an operator with a known iteration space.
  for (const auto& l : m.model.layers) EXPECT_FALSE(l.op->dims.empty()) << l.name;
  EXPECT_EQ(softmax, 2);
  EXPECT_GT(plan_cost(m.model, 8), 0);
}

TEST(OnnxReader, DebianTestdataModelsPlanOrReportTheNode) {
  fs::path root = fs::path(PARAPLAN_ONNX_TESTDATA) / "pytorch-converted";
  if (!fs::exists(root)) GTEST_SKIP() << "libonnx-testdata is not installed";
  std::vector<fs::path> models;
  for (const auto& dir : fs::directory_iterator(root))
    if (fs::exists(dir.path() / "model.onnx")) models.push_back(dir.path() / "model.onnx");
  std::sort(models.begin(), models.end());
  ASSERT_GT(models.size(), 50u);
  int planned = 0;
  for (const auto& p : models) {
    try {
      OnnxModel m = read_onnx(p.string());
      plan_cost(m.model, 4);
      ++planned;
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::kInput) << p << ": " << what;
      EXPECT_NE(what.find("unsupported node"), std::string::npos) << p << ": " << what;
      EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    }
  }
  EXPECT_GE(planned, 40);
  for (const char* name : {"test_Conv2d", "test_Linear", "test_MaxPool2d", "test_AvgPool2d",
                           "test_BatchNorm2d_eval", "test_Softmax", "test_Embedding", "test_ReLU"})
    EXPECT_NO_THROW(read_onnx((root / name / "model.onnx").string())) << name;
}

// Every model of Debian's ONNX test data (single operators, small graphs, PyTorch exports):
// either it plans, or it is refused with an input error; never a crash or another exception.
TEST(OnnxReader, EveryTestdataModelPlansOrIsRefusedCleanly) {
  fs::path root(PARAPLAN_ONNX_TESTDATA);
  if (!fs::exists(root)) GTEST_SKIP() << "libonnx-testdata is not installed";
  std::vector<fs::path> models;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.path().filename() == "model.onnx") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  ASSERT_GT(models.size(), 1000u);
  int planned = 0, refused = 0;
  for (const auto& p : models) {
    try {
      OnnxModel m = read_onnx(p.string());
      plan_cost(m.model, 4);
      ++planned;
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::kInput || e.kind() == ErrorKind::kInfeasible)
          << p << ": " << e.what();
      ++refused;
    }
  }
  EXPECT_GE(planned, 300);
  EXPECT_EQ(planned + refused, static_cast<int>(models.size()));
}

TEST(OnnxReader, UnsupportedOperatorsAreNamed) {
  OnnxBuilder b;
  std::string x = b.input("x", {2, 3, 8, 8});
  auto* pad = b.node("Pad", {x, b.ints({0, 0, 1, 1, 0, 0, 1, 1})});
  std::string y = b.op("Relu", {pad->output(0)});
  auto* lrn = b.node("LRN", {x});
  OnnxBuilder::attr(lrn, "size", std::int64_t{3});
  b.output(y);
  b.output(lrn->output(0));
  std::string path = b.save("paraplan_unsupported.onnx");
  try {
    read_onnx(path);
    FAIL();
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(what.find("2 unsupported nodes"), std::string::npos) << what;
    EXPECT_NE(what.find(pad->name() + "\" (Pad)"), std::string::npos) << what;
    EXPECT_NE(what.find("(LRN)"), std::string::npos) << what;
  }
}

TEST(OnnxReader, MalformedFilesAreInputErrors) {
  fs::path p = fs::temp_directory_path() / "paraplan_garbage.onnx";
  {
    std::ofstream out(p, std::ios::binary);
    out << "this is not a protobuf \x01\x02\xff\xff\xff";
  }
  try {
    read_onnx(p.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos);
  }
  try {
    read_onnx((fs::temp_directory_path() / "paraplan_missing.onnx").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
  }
  // Shapes that contradict each other: an Add of (2, 3) and (4, 5).
  OnnxBuilder b;
  std::string x = b.input("x", {2, 3}), y = b.input("y", {4, 5});
  b.output(b.op("Add", {x, y}));
  try {
    read_onnx(b.save("paraplan_badshapes.onnx"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
  }
}

/// The reader's message for `b`'s model, which must be refused as bad input.
std::string refusal(OnnxBuilder& b, const std::string& file) {
  try {
    read_onnx(b.save(file));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << file << " was read";
  return "";
}

// libonnx 1.12's inference takes a Conv's kernel from its weight when kernel_shape is absent and
// indexes the input's sizes by it: a weight of another rank than its input read out of bounds
// (found by fuzz_onnx). The input here is made by an earlier node, so its rank is learned by
// inference on the graph before the Conv.
TEST(OnnxReader, ConvolutionWeightsOfTheWrongRankAreRefusedBeforeInference) {
  for (const std::string auto_pad : {"NOTSET", "SAME_UPPER"}) {
    for (std::int64_t rank : {3, 5}) {
      OnnxBuilder b;
      std::string x = b.op("Relu", {b.input("x", {2, 3, 8, 8})});
      std::vector<std::int64_t> w_shape{4, 3, 3, 3, 3};
      w_shape.resize(static_cast<std::size_t>(rank));
      auto* c = b.node("Conv", {x, b.weight(w_shape)});
      auto* a = c->add_attribute();
      a->set_name("auto_pad");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(auto_pad);
      b.output(c->output(0));
      std::string what = refusal(b, "paraplan_conv_rank.onnx");
      EXPECT_NE(what.find(c->name() + "\" (Conv): its weight \"" + c->input(1) + "\" has rank " +
                          std::to_string(rank) + " but its input \"" + x + "\" has rank 4"),
                std::string::npos)
          << what;
    }
  }
  // With kernel_shape, libonnx checks its length against the input's rank itself (and, as it
  // reports node errors only in its strict mode, leaves the output without a shape).
  OnnxBuilder b;
  auto* c = b.node("Conv", {b.op("Relu", {b.input("x", {2, 3, 8, 8})}), b.weight({4, 3, 3, 3})});
  OnnxBuilder::attr(c, "kernel_shape", std::vector<std::int64_t>{3, 3, 3});
  b.output(c->output(0));
  std::string what = refusal(b, "paraplan_conv_kernel.onnx");
  EXPECT_NE(what.find(c->name() + "\" (Conv): the shape of \"" + c->output(0) +
                      "\" is not known after shape inference"),
            std::string::npos)
      << what;
}

TEST(OnnxReader, TransposedConvolutionAndUnpoolingInputsOfTheWrongRankAreRefused) {
  OnnxBuilder b;
  auto* t = b.node("ConvTranspose", {b.input("x", {2, 3, 8, 8}), b.weight({3})});
  OnnxBuilder::attr(t, "kernel_shape", std::vector<std::int64_t>{3, 3});
  b.output(t->output(0));
  std::string what = refusal(b, "paraplan_convtranspose_rank.onnx");
  EXPECT_NE(what.find("(ConvTranspose): its weight \"" + t->input(1) + "\" has rank 1"),
            std::string::npos)
      << what;

  OnnxBuilder u;
  std::string x = u.input("x", {2, 3, 4, 4});
  auto* sum = u.node("ReduceSum", {u.input("i", {2, 3, 4, 4})});
  OnnxBuilder::attr(sum, "keepdims", std::int64_t{0});
  auto* unpool = u.node("MaxUnpool", {x, sum->output(0)});
  OnnxBuilder::attr(unpool, "kernel_shape", std::vector<std::int64_t>{2, 2});
  u.output(unpool->output(0));
  what = refusal(u, "paraplan_maxunpool_rank.onnx");
  EXPECT_NE(what.find("(MaxUnpool): the shape of its indices"), std::string::npos) << what;
}

TEST(OnnxReader, ConvolutionsInsideSubgraphsAreRefused) {
  OnnxBuilder b;
  auto* branch = b.node("If", {b.input("cond", {1})});
  onnx::GraphProto g;
  g.set_name("then");
  auto* conv = g.add_node();
  conv->set_op_type("Conv");
  conv->add_input("x");
  conv->add_input("w");
  conv->add_output("y");
  g.add_output()->set_name("y");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = branch->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = g;
  }
  b.output(branch->output(0));
  std::string what = refusal(b, "paraplan_if_conv.onnx");
  EXPECT_NE(what.find("(Conv) is inside a subgraph"), std::string::npos) << what;
}

// Gemm-6's inference reads two dimensions of each input without checking their rank; a rank-0
// input made libonnx 1.12 read through a null pointer (found by fuzz_onnx). Inference runs in a
// child process: the model is refused naming the node, and the reader's process lives on.
TEST(OnnxReader, ANodeThatCrashesLibonnxIsNamedAndTheReaderSurvives) {
  OnnxBuilder b(6);
  std::string x = b.input("x", {});
  b.m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  std::string y = b.op("Relu", {b.input("y", {4, 10})});
  auto* gemm = b.node("Gemm", {x, b.weight({8, 10}), b.weight({8})});
  OnnxBuilder::attr(gemm, "transB", std::int64_t{1});
  b.output(gemm->output(0));
  b.output(y);
  std::string what = refusal(b, "paraplan_gemm6_rank0.onnx");
  // (A signal, or under AddressSanitizer its report and exit status 1.)
  EXPECT_NE(what.find("node 1 \"" + gemm->name() +
                      "\" (Gemm): libonnx's shape inference did not survive it ("),
            std::string::npos)
      << what;
}

}  // namespace
}  // namespace paraplan::io
