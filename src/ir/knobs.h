// The training knobs, each declared once: its name in every front end (request field and Python
// keyword, CLI flag, the key of a plan file's `config`), its type, unit and range, its default
// (or that the planners search it), the stacks it applies to and each engine's own spelling of
// it. The CLI's flags, the Python keywords, the plan file's reader and the engines' launch
// vocabularies are derived from this table (a test walks it against each of them); adding a
// knob is one row here and the field it sets.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/training.h"

namespace paraplan {

/// The knobs of a TrainingConfig (and the device count they must fill), with the choices a
/// front end adds to them (the attention kernel, dtypes, memory).
enum class Knob {
  kDevices,
  kGlobalBatch,
  kMicroBatch,
  kSeqLen,
  kTp,
  kCp,
  kPp,
  kDp,
  kEp,
  kEtp,
  kVpp,
  kRecompute,
  kSequenceParallel,
  kZero,
  kShardGroup,
  kOverlapGradReduce,
  kAttention,
  kStageLayers,
  kMoeCapacityFactor,
  kStack,
  kTpCommOverlap,
  kOverlapP2pComm,
  kOverlapParamGather,
  kPrecision,
  kFp8ParamGather,
  kGradReduceDtype,
  kLossDtype,
  kMemory,
  kMemoryHeadroom,
  kCalibration,
  kCompile,
  kLossKernel,
  kOptimizerMoments,
  kSharedExpertOverlap,
  kPrecisionAwareOptimizer,
};

/// How a front end takes a knob's value.
enum class KnobType {
  kInteger,  ///< a whole number in [min, max]
  kReal,     ///< a number in [min, max]
  kFlag,     ///< given: on (`--sequence-parallel`; Python True)
  kOnOff,    ///< on, off, or the stack's choice (`--x` / `--no-x`; Python True / False / None)
  kChoice,   ///< one of `choices`
  kText,     ///< text its own parser reads (recompute, a layer split, a size, a file)
};

/// The engines whose launches spell the knobs (what `--export` writes and `--from` reads).
enum class Engine { kMegatronLm, kNemo, kMegatronDeepSpeed, kTorchtitan, kMegatronBridge };
inline constexpr std::array<Engine, 5> kEngines = {Engine::kMegatronLm, Engine::kNemo,
                                                   Engine::kMegatronDeepSpeed, Engine::kTorchtitan,
                                                   Engine::kMegatronBridge};
/// "megatron", "nemo", "deepspeed", "torchtitan", "bridge": the engine as `--export` and `--from`
/// name it.
std::string_view engine_name(Engine engine);

/// A set of stacks, one bit per Stack.
constexpr unsigned stack_bit(Stack stack) { return 1u << static_cast<unsigned>(stack); }
inline constexpr unsigned kAllStacks =
    stack_bit(Stack::kMegatron) | stack_bit(Stack::kFsdp) | stack_bit(Stack::kDeepSpeed);

struct KnobSpec {
  Knob knob;
  std::string_view keyword;     ///< the request's field and Python keyword: "batch"
  std::string_view flag;        ///< the CLI's flag: "--batch"
  std::string_view config_key;  ///< its key in a plan file's `config` ("" when not there)
  KnobType type;
  std::string_view unit;     ///< what a number counts: "sequences", "tokens", "devices", ...
  double min = 0, max = 0;   ///< kInteger, kReal: the range every front end and reader takes
  std::string_view choices;  ///< kChoice: "flash|standard"
  /// plan and frontier search it when it is not given (evaluate takes `default_text`).
  bool searched = false;
  /// What a verb uses when the user does not give it, as printed beside the answer.
  std::string_view default_text;
  unsigned stacks = kAllStacks;  ///< the training stacks it applies to
  /// Each engine's own spelling, in kEngines' order ("" where the engine has none).
  std::array<std::string_view, 5> spelling = {};
  std::string_view help;  ///< what it is, for --help and the docs

  std::string_view spelled(Engine engine) const {
    return spelling[static_cast<std::size_t>(engine)];
  }
};

/// The stacks a knob applies to, by name ("megatron", "fsdp", "deepspeed"), in Stack's order.
std::vector<std::string> stacks_of(const KnobSpec& spec);
/// A kChoice knob's choices ("flash|standard" → {"flash", "standard"}).
std::vector<std::string> choices_of(const KnobSpec& spec);

/// Every knob, in Knob's order.
std::span<const KnobSpec> knob_table();
const KnobSpec& knob_spec(Knob knob);
/// paraplan's own name of a knob: its key in a plan file's `config` ("tp", "global_batch"), or
/// its keyword for knobs plan files do not hold.
std::string_view knob_field(Knob knob);

/// One default per concept, the same in every verb (the table's default_text says them).
inline constexpr std::string_view kDefaultCluster = "dgx-a100";
inline constexpr int kDefaultDevices = 8;
inline constexpr std::int64_t kDefaultGlobalBatch = 512;
inline constexpr std::int64_t kDefaultSeqLen = 2048;
/// How sure a predicted iteration time is, per stack: the mean absolute error of the analytic
/// model on the measured sets of that stack (docs/cost-models.md; `paraplan validate` prints
/// them): megatron 4.1 % (NeMo on H100), fsdp 7.3 % (plain PyTorch on one H100, both sets; MPT
/// on A100 3.6 %), deepspeed 7.8 % (vTrain's multi-node Megatron-DeepSpeed runs).
inline constexpr double kTimeBandMegatron = 0.041, kTimeBandFsdp = 0.073,
                        kTimeBandDeepSpeed = 0.078;
inline constexpr double time_band(Stack stack) {
  return stack == Stack::kMegatron ? kTimeBandMegatron
         : stack == Stack::kFsdp   ? kTimeBandFsdp
                                   : kTimeBandDeepSpeed;
}
/// How sure a predicted peak is: the mean absolute error of the analytic peak against the
/// allocator's reserved peak on the measured single-GPU runs, both sets (4.2 %; 10.6 % at most,
/// recomputed runs' fragmentation), the only measured peaks paraplan has (the other sets say ran or
/// out of memory, which the verdicts check).
inline constexpr double kPeakBand = 0.042, kPeakBandLargest = 0.106;
/// The memory `plan` keeps free unless told: the analytic model's peaks are within 4.2 % of the
/// allocator's on the measured single-GPU runs (mean; 10.6 % at most, recomputed runs' extra
/// fragmentation), so a plan within 5 % of the wall is inside its error band.
inline constexpr std::string_view kDefaultPlanHeadroom = "5%";
/// How long `plan` searches unless told (seconds; 0: no limit): the transformer planner answers
/// with the best plan found so far, the pipeline planner with the coarsened graph's plan, and
/// each says so. Answers usually take well under a second; the limit is for inputs that would
/// not (a 4,096-layer graph's exact search takes about 3 minutes).
inline constexpr double kDefaultPlanTimeLimitS = 60;

/// What follows "--devices" when `devices` is not a multiple of tp × cp × pp: ": not divisible by
/// tp × cp × pp = 3 × 1 × 1 = 3 (data parallelism would be 5.33 replicas); valid: a multiple of
/// 3, e.g. 15 or 18".
std::string indivisible_devices(int devices, int tp, int cp, int pp);

/// The limits of the options besides the knobs, the same in every front end and reader.
inline constexpr int kMaxMicrobatches = 1 << 30;  ///< Piper's micro-batches per batch
inline constexpr double kMaxMemoryStep = 0.5;     ///< the pipeline frontier's memory step

}  // namespace paraplan
