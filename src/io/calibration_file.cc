#include "io/calibration_file.h"

#include "io/yaml_json.h"

namespace paraplan::io {
namespace {

// Efficiencies are fractions of a peak: in (0, 1].
double fraction(const JsonObject& o, std::string_view key) {
  const double x = o.positive_number(key);
  if (x > 1) o.fail(key, "an efficiency is a fraction of the peak, in (0, 1]");
  return x;
}

std::vector<double> fractions(const JsonObject& o, std::string_view key) {
  const Json& list = o.array(key);
  if (list.empty()) o.fail(key, "needs one efficiency per link tier (innermost first)");
  std::vector<double> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string place = o.place(key) + "/" + std::to_string(i);
    const double x = checked_number(list[i], place, true);
    if (x > 1)
      throw Error(ErrorKind::kInput, place, "an efficiency is a fraction of the peak, in (0, 1]");
    out.push_back(x);
  }
  return out;
}

}  // namespace

Json calibration_to_json(const Calibration& c) {
  return Json{{"format", "paraplan-calibration"},
              {"version", 3},
              {"device", c.device},
              {"gemm_efficiency", c.gemm_efficiency},
              {"gemm_half_efficiency_flops", c.gemm_half_efficiency_flops},
              {"attention_efficiency", c.attention_efficiency},
              {"flash_attention_efficiency", c.flash_attention_efficiency},
              {"flash_backward_efficiency", c.flash_backward_efficiency},
              {"fused_attention_efficiency", c.fused_attention_efficiency},
              {"fused_attention_backward_efficiency", c.fused_attention_backward_efficiency},
              {"memory_bandwidth_bytes_per_s", c.memory_bandwidth_bytes_per_s},
              {"score_bytes_per_element", c.score_bytes_per_element},
              {"hidden_bytes_per_element", c.hidden_bytes_per_element},
              {"eager_hidden_bytes_per_element", c.eager_hidden_bytes_per_element},
              {"layer_overhead_s", c.layer_overhead_s},
              {"logit_bytes_per_element", c.logit_bytes_per_element},
              {"collective_efficiency", c.collective_efficiency},
              {"ring_step_latency_s", c.ring_step_latency_s},
              {"network_step_latency_s", c.network_step_latency_s},
              {"p2p_efficiency", c.p2p_efficiency},
              {"p2p_overhead_s", c.p2p_overhead_s},
              {"gradient_bytes_per_parameter", c.gradient_bytes_per_parameter},
              {"optimizer_bytes_per_parameter", c.optimizer_bytes_per_parameter},
              {"iteration_overhead_s", c.iteration_overhead_s},
              {"overlap_slowdown", c.overlap_slowdown},
              {"comm_overlap_slowdown", c.comm_overlap_slowdown},
              {"runtime_reserved_bytes", c.runtime_reserved_bytes},
              {"nccl_communicator_bytes", c.nccl_communicator_bytes},
              {"allocator_fragmentation", c.allocator_fragmentation},
              {"moe_load_imbalance", c.moe_load_imbalance}};
}

Calibration calibration_from_json(const Json& doc, const std::string& source) {
  JsonObject o(doc, source, "");
  o.only({"format",
          "version",
          "device",
          "gemm_efficiency",
          "gemm_half_efficiency_flops",
          "attention_efficiency",
          "flash_attention_efficiency",
          "flash_backward_efficiency",
          "fused_attention_efficiency",
          "fused_attention_backward_efficiency",
          "memory_bandwidth_bytes_per_s",
          "score_bytes_per_element",
          "hidden_bytes_per_element",
          "eager_hidden_bytes_per_element",
          "layer_overhead_s",
          "logit_bytes_per_element",
          "collective_efficiency",
          "ring_step_latency_s",
          "network_step_latency_s",
          "p2p_efficiency",
          "p2p_overhead_s",
          "gradient_bytes_per_parameter",
          "optimizer_bytes_per_parameter",
          "iteration_overhead_s",
          "overlap_slowdown",
          "comm_overlap_slowdown",
          "runtime_reserved_bytes",
          "nccl_communicator_bytes",
          "allocator_fragmentation",
          "moe_load_imbalance"});
  if (o.string("format") != "paraplan-calibration")
    o.fail("format", "expected \"paraplan-calibration\"");
  const long long version = o.integer("version", 1, 3);
  if (version == 1)
    o.fail("version",
           "expected 3 (version 1 files lack the memory fields runtime_reserved_bytes "
           "and allocator_fragmentation; add them, see docs/formats.md)");
  Calibration c;
  // Version 2 files predate the FlashAttention, logit and network-latency terms: those take
  // their version-2 meaning (the standard-attention efficiency, 12 bytes per logit, the
  // intra-node ring latency).
  auto v3 = [&](const char* key, double fallback, bool fraction_only) {
    if (version < 3) {
      if (o.has(key)) o.fail(key, "not a version 2 field; write \"version\": 3");
      return fallback;
    }
    return fraction_only ? fraction(o, key) : o.number(key);
  };
  c.device = o.string("device");
  c.gemm_efficiency = fraction(o, "gemm_efficiency");
  c.gemm_half_efficiency_flops = o.number("gemm_half_efficiency_flops");
  c.attention_efficiency = fraction(o, "attention_efficiency");
  c.memory_bandwidth_bytes_per_s = o.positive_number("memory_bandwidth_bytes_per_s");
  c.score_bytes_per_element = o.number("score_bytes_per_element");
  c.hidden_bytes_per_element = o.number("hidden_bytes_per_element");
  c.layer_overhead_s = o.number("layer_overhead_s");
  c.collective_efficiency = fractions(o, "collective_efficiency");
  c.ring_step_latency_s = o.number("ring_step_latency_s");
  c.flash_attention_efficiency = v3("flash_attention_efficiency", c.attention_efficiency, true);
  c.flash_backward_efficiency = v3("flash_backward_efficiency", c.attention_efficiency, true);
  c.eager_hidden_bytes_per_element =
      v3("eager_hidden_bytes_per_element", c.hidden_bytes_per_element, false);
  c.logit_bytes_per_element = v3("logit_bytes_per_element", 12, false);
  c.network_step_latency_s = v3("network_step_latency_s", c.ring_step_latency_s, false);
  c.p2p_efficiency = fractions(o, "p2p_efficiency");
  c.p2p_overhead_s = o.number("p2p_overhead_s");
  c.gradient_bytes_per_parameter = o.positive_number("gradient_bytes_per_parameter");
  c.optimizer_bytes_per_parameter = o.number("optimizer_bytes_per_parameter");
  c.iteration_overhead_s = o.number("iteration_overhead_s");
  c.overlap_slowdown = o.number("overlap_slowdown");
  if (c.overlap_slowdown > 1)
    o.fail("overlap_slowdown", "a fraction of the overlapped time, in [0, 1]");
  c.runtime_reserved_bytes = o.number("runtime_reserved_bytes");
  // Version 2 counted NCCL's buffers inside runtime_reserved_bytes.
  c.nccl_communicator_bytes = v3("nccl_communicator_bytes", 0, false);
  c.allocator_fragmentation = o.number("allocator_fragmentation");
  if (c.allocator_fragmentation > 1)
    o.fail("allocator_fragmentation", "a fraction of the iteration's transient memory, in [0, 1]");
  // Optional (added within version 3): files without them keep the flash kernel's figures for
  // the fused one, and the default Megatron-Core overlap slowdown.
  c.fused_attention_efficiency = o.has("fused_attention_efficiency")
                                     ? fraction(o, "fused_attention_efficiency")
                                     : c.flash_attention_efficiency;
  c.fused_attention_backward_efficiency = o.has("fused_attention_backward_efficiency")
                                              ? fraction(o, "fused_attention_backward_efficiency")
                                              : c.flash_backward_efficiency;
  if (o.has("comm_overlap_slowdown")) {
    c.comm_overlap_slowdown = o.number("comm_overlap_slowdown");
    if (c.comm_overlap_slowdown > 1)
      o.fail("comm_overlap_slowdown", "a fraction of the overlapped time, in [0, 1]");
  }
  if (o.has("moe_load_imbalance")) {
    c.moe_load_imbalance = o.number("moe_load_imbalance");
    if (c.moe_load_imbalance < 1)
      o.fail("moe_load_imbalance", "the busiest rank's tokens over the mean, at least 1");
  }
  return c;
}

Calibration read_calibration_file(const std::string& path) {
  return calibration_from_json(parse_json_or_yaml_file(path), path);
}

}  // namespace paraplan::io
