// The five graphs of PaSE's graph.py, layer for layer (specs/pase.md §5).
#include "zoo/pase_graphs.h"

#include <functional>
#include <map>

#include "ir/error.h"
#include "ir/op_graph.h"

namespace paraplan::zoo {
namespace {

using T = OpTensor;

OperatorWorkload alexnet(int b) {
  OpGraphBuilder g("alexnet");
  T x = g.input({b, 3, 227, 227}, {"b", "C", "H", "W"});
  x = g.conv(x, 96, 11, 11, 4, 4, 0, 0, 1, "conv1");
  x = g.pooling(x, 3, 3, 2, 2, 0, 0, "pool1");
  x = g.conv(x, 256, 5, 5, 1, 1, 2, 2, 1, "conv2");
  x = g.pooling(x, 3, 3, 2, 2, 0, 0, "pool2");
  x = g.conv(x, 384, 3, 3, 1, 1, 1, 1, 1, "conv3");
  x = g.conv(x, 384, 3, 3, 1, 1, 1, 1, 1, "conv4");
  x = g.conv(x, 256, 3, 3, 1, 1, 1, 1, 1, "conv5");
  x = g.pooling(x, 3, 3, 2, 2, 0, 0, "pool5");
  x = g.reshape(x, {b, 256 * 6 * 6}, "flatten");
  x = g.fully_connected(x, 4096, 1, "fc6");
  x = g.fully_connected(x, 4096, 1, "fc7");
  x = g.fully_connected(x, 1024, 0, "fc8");
  g.softmax_cross_entropy(x, "loss");
  return {g.finish(), 4};
}

/// Conv (no fused op) followed by BatchNorm.
T conv_bn(OpGraphBuilder& g, const T& x, std::int64_t n, std::int64_t r, std::int64_t s,
          std::int64_t stride, std::int64_t pad_r, std::int64_t pad_c, const std::string& name) {
  T y = g.conv(x, n, r, s, stride, stride, pad_r, pad_c, 0, name);
  return g.norm(y, 0, name + "/bn");
}

OperatorWorkload resnet101(int b) {
  OpGraphBuilder g("resnet101");
  T x = g.input({b, 3, 227, 227}, {"b", "C", "H", "W"});
  x = conv_bn(g, x, 64, 7, 7, 2, 3, 3, "conv1");
  x = g.pooling(x, 3, 3, 2, 2, 1, 1, "pool1");
  const int blocks[] = {3, 4, 23, 3};
  const std::int64_t planes[] = {64, 128, 256, 512};
  const std::int64_t strides[] = {1, 2, 2, 2};
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < blocks[stage]; ++i) {
      std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      std::int64_t p = planes[stage], s = i == 0 ? strides[stage] : 1;
      T y = conv_bn(g, x, p, 1, 1, 1, 0, 0, name + "/conv1");
      y = conv_bn(g, y, p, 3, 3, s, 1, 1, name + "/conv2");
      y = conv_bn(g, y, 4 * p, 1, 1, 1, 0, 0, name + "/conv3");
      T identity = x;
      if (i == 0) identity = conv_bn(g, x, 4 * p, 1, 1, s, 0, 0, name + "/downsample");
      x = g.elementwise({y, identity}, 1, name + "/add");
    }
  }
  x = g.reduce_mean(x, {2, 3}, "avgpool");
  x = g.fully_connected(x, 1000, 0, "fc");
  g.softmax_cross_entropy(x, "loss");
  return {g.finish(), 4};
}

struct Inception {
  OpGraphBuilder& g;
  T bc(const T& x, std::int64_t n, std::int64_t r, std::int64_t s, std::int64_t stride,
       std::int64_t pad_r, std::int64_t pad_c, const std::string& name) {
    return conv_bn(g, x, n, r, s, stride, pad_r, pad_c, name);
  }
  T pool(const T& x, std::int64_t stride, std::int64_t pad, const std::string& name) {
    return g.pooling(x, 3, 3, stride, stride, pad, pad, name);
  }
  T a(const T& x, std::int64_t pf, const std::string& m) {
    T b1 = bc(x, 64, 1, 1, 1, 0, 0, m + "/b1");
    T b5 = bc(x, 48, 1, 1, 1, 0, 0, m + "/b5_1");
    b5 = bc(b5, 64, 5, 5, 1, 2, 2, m + "/b5_2");
    T b3 = bc(x, 64, 1, 1, 1, 0, 0, m + "/b3_1");
    b3 = bc(b3, 96, 3, 3, 1, 1, 1, m + "/b3_2");
    b3 = bc(b3, 96, 3, 3, 1, 1, 1, m + "/b3_3");
    T bp = pool(x, 1, 1, m + "/pool");
    bp = bc(bp, pf, 1, 1, 1, 0, 0, m + "/bp");
    return g.concat({b1, b5, b3, bp}, 1, m + "/concat");
  }
  T b(const T& x, const std::string& m) {
    T b3 = bc(x, 384, 3, 3, 2, 0, 0, m + "/b3");
    T bd = bc(x, 64, 1, 1, 1, 0, 0, m + "/bd_1");
    bd = bc(bd, 96, 3, 3, 1, 1, 1, m + "/bd_2");
    bd = bc(bd, 96, 3, 3, 2, 0, 0, m + "/bd_3");
    T bp = pool(x, 2, 0, m + "/pool");
    return g.concat({b3, bd, bp}, 1, m + "/concat");
  }
  T c(const T& x, std::int64_t c7, const std::string& m) {
    T b1 = bc(x, 192, 1, 1, 1, 0, 0, m + "/b1");
    T b7 = bc(x, c7, 1, 1, 1, 0, 0, m + "/b7_1");
    b7 = bc(b7, c7, 1, 7, 1, 0, 3, m + "/b7_2");
    b7 = bc(b7, 192, 7, 1, 1, 3, 0, m + "/b7_3");
    T bd = bc(x, c7, 1, 1, 1, 0, 0, m + "/bd_1");
    bd = bc(bd, c7, 7, 1, 1, 3, 0, m + "/bd_2");
    bd = bc(bd, c7, 1, 7, 1, 0, 3, m + "/bd_3");
    bd = bc(bd, c7, 7, 1, 1, 3, 0, m + "/bd_4");
    bd = bc(bd, 192, 1, 7, 1, 0, 3, m + "/bd_5");
    T bp = pool(x, 1, 1, m + "/pool");
    bp = bc(bp, 192, 1, 1, 1, 0, 0, m + "/bp");
    return g.concat({b1, b7, bd, bp}, 1, m + "/concat");
  }
  T d(const T& x, const std::string& m) {
    T b3 = bc(x, 192, 1, 1, 1, 0, 0, m + "/b3_1");
    b3 = bc(b3, 320, 3, 3, 2, 0, 0, m + "/b3_2");
    T b7 = bc(x, 192, 1, 1, 1, 0, 0, m + "/b7_1");
    b7 = bc(b7, 192, 1, 7, 1, 0, 3, m + "/b7_2");
    b7 = bc(b7, 192, 7, 1, 1, 3, 0, m + "/b7_3");
    b7 = bc(b7, 192, 3, 3, 2, 0, 0, m + "/b7_4");
    T bp = pool(x, 2, 0, m + "/pool");
    return g.concat({b3, b7, bp}, 1, m + "/concat");
  }
  T e(const T& x, const std::string& m) {
    T b1 = bc(x, 320, 1, 1, 1, 0, 0, m + "/b1");
    T y = bc(x, 384, 1, 1, 1, 0, 0, m + "/b3_1");
    T y1 = bc(y, 384, 1, 3, 1, 0, 1, m + "/b3_2a");
    T y2 = bc(y, 384, 3, 1, 1, 1, 0, m + "/b3_2b");
    T b3 = g.concat({y1, y2}, 1, m + "/b3_concat");
    T z = bc(x, 448, 1, 1, 1, 0, 0, m + "/bd_1");
    z = bc(z, 384, 3, 3, 1, 1, 1, m + "/bd_2");
    T z1 = bc(z, 384, 1, 3, 1, 0, 1, m + "/bd_3a");
    T z2 = bc(z, 384, 3, 1, 1, 1, 0, m + "/bd_3b");
    T bd = g.concat({z1, z2}, 1, m + "/bd_concat");
    T bp = pool(x, 1, 1, m + "/pool");
    bp = bc(bp, 192, 1, 1, 1, 0, 0, m + "/bp");
    return g.concat({b1, b3, bd, bp}, 1, m + "/concat");
  }
};

OperatorWorkload inception3(int b) {
  OpGraphBuilder g("inception3");
  Inception in{g};
  T x = g.input({b, 3, 299, 299}, {"b", "C", "H", "W"});
  x = in.bc(x, 32, 3, 3, 2, 0, 0, "Conv2d_1a");
  x = in.bc(x, 32, 3, 3, 1, 0, 0, "Conv2d_2a");
  x = in.bc(x, 64, 3, 3, 1, 1, 1, "Conv2d_2b");
  x = in.pool(x, 2, 0, "pool1");
  x = in.bc(x, 80, 1, 1, 1, 0, 0, "Conv2d_3b");
  x = in.bc(x, 192, 3, 3, 1, 0, 0, "Conv2d_4a");
  x = in.pool(x, 2, 0, "pool2");
  x = in.a(x, 32, "Mixed_5b");
  x = in.a(x, 64, "Mixed_5c");
  x = in.a(x, 64, "Mixed_5d");
  x = in.b(x, "Mixed_6a");
  x = in.c(x, 128, "Mixed_6b");
  x = in.c(x, 160, "Mixed_6c");
  x = in.c(x, 160, "Mixed_6d");
  x = in.c(x, 192, "Mixed_6e");
  x = in.d(x, "Mixed_7a");
  x = in.e(x, "Mixed_7b");
  x = in.e(x, "Mixed_7c");
  x = g.reduce_mean(x, {2, 3}, "avgpool");
  x = g.fully_connected(x, 1000, 0, "fc");
  g.softmax_cross_entropy(x, "loss");
  return {g.finish(), 4};
}

OperatorWorkload rnnlm(int b) {
  OpGraphBuilder g("rnnlm");
  T tokens = g.input({b, 256}, {"b", "s"});
  T x = g.embedding(tokens, 100000, 2048, "embedding");
  x = g.lstm(x, 2048, 2, "lstm");
  x = g.fully_connected(x, 100000, 0, "fc");
  g.softmax_cross_entropy(x, "loss");
  return {g.finish(), 1};
}

struct TransformerBuilder {
  OpGraphBuilder& g;
  std::int64_t b;
  static constexpr std::int64_t l = 256, e = 512, h = 8, k = 64, ff = 2048, vocab = 50000;

  T attention(const T& qkv_in, const T& residual, bool cross, const std::string& m) {
    T w_qkv = g.input({3, h, e, k}, {"s", "h", "e", "k"});
    T qkv = g.einsum(cross ? "sble,shek->sbhlk" : "ble,shek->sbhlk", qkv_in, w_qkv, 0, m + "/qkv");
    auto parts = g.unstack(qkv, 0, m + "/unstack");
    T logits = g.einsum("bhlk,bhmk->bhlm", parts[0], parts[1], 0, m + "/qk");
    T probs = g.softmax(logits, 3, m + "/softmax");
    T ctx = g.einsum("bhlm,bhmk->bhlk", probs, parts[2], 0, m + "/av");
    T w_o = g.input({h, e, k}, {"h", "e", "k"});
    T out = g.einsum("bhlk,hek->ble", ctx, w_o, 0, m + "/proj");
    T sum = g.elementwise({residual, out}, 0, m + "/add");
    return g.norm(sum, -1, m + "/norm");
  }
  T self_attention(const T& x, const std::string& m) { return attention(x, x, false, m); }
  T cross_attention(const T& x, const T& enc, const std::string& m) {
    T stacked = g.stack({x, enc, enc}, 0, m + "/stack");
    return attention(stacked, x, true, m);
  }
  T ffn(const T& x, const std::string& m) {
    T w1 = g.input({e, ff}, {"e", "f"});
    T w2 = g.input({ff, e}, {"f", "e"});
    T y = g.einsum("ble,ef->blf", x, w1, 2, m + "/ffn1");
    y = g.einsum("blf,fe->ble", y, w2, 0, m + "/ffn2");
    T sum = g.elementwise({x, y}, 0, m + "/add");
    return g.norm(sum, -1, m + "/norm");
  }
};

OperatorWorkload transformer(int b) {
  OpGraphBuilder g("transformer");
  TransformerBuilder t{g, b};
  const std::int64_t l = TransformerBuilder::l, e = TransformerBuilder::e;
  T pos = g.input({b, l, e}, {"b", "l", "e"});
  T enc_tokens = g.input({b, l}, {"b", "l"});
  T x = g.embedding(enc_tokens, TransformerBuilder::vocab, e, "encoder/embedding");
  x = g.elementwise({x, pos}, 0, "encoder/position");
  for (int i = 0; i < 6; ++i) {
    std::string m = "encoder" + std::to_string(i);
    x = t.self_attention(x, m + "/self");
    x = t.ffn(x, m + "/ffn");
  }
  T enc = x;
  T dec_tokens = g.input({b, l}, {"b", "l"});
  x = g.embedding(dec_tokens, TransformerBuilder::vocab, e, "decoder/embedding");
  x = g.elementwise({x, pos}, 0, "decoder/position");
  for (int i = 0; i < 6; ++i) {
    std::string m = "decoder" + std::to_string(i);
    x = t.self_attention(x, m + "/self");
    x = t.cross_attention(x, enc, m + "/cross");
    x = t.ffn(x, m + "/ffn");
  }
  T w_out = g.input({e, TransformerBuilder::vocab}, {"e", "v"});
  x = g.einsum("ble,ev->blv", x, w_out, 0, "output");
  g.softmax_cross_entropy(x, "loss");
  return {g.finish(), 1};
}

}  // namespace

const std::vector<std::string>& pase_graph_names() {
  static const std::vector<std::string> names = {"alexnet", "resnet101", "inception3", "rnnlm",
                                                 "transformer"};
  return names;
}

OperatorWorkload pase_graph(const std::string& name, int batch) {
  if (batch < 1) throw FieldError("batch", ": expected a positive number of samples");
  static const std::map<std::string, std::function<OperatorWorkload(int)>> graphs = {
      {"alexnet", alexnet},
      {"resnet101", resnet101},
      {"inception3", inception3},
      {"rnnlm", rnnlm},
      {"transformer", transformer}};
  auto it = graphs.find(name);
  if (it == graphs.end()) {
    std::string valid;
    for (const auto& n : pase_graph_names()) {
      if (!valid.empty()) valid += ", ";
      valid += n;
    }
    throw FieldError("model", ": unknown built-in model \"" + name +
                                  "\" (built-in operator graphs: " + valid + ")");
  }
  return it->second(batch);
}

}  // namespace paraplan::zoo
