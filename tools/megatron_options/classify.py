#!/usr/bin/env python3
"""Writes src/engines/megatron_option_table.cc: every option of Megatron-LM's pretrain_gpt.py at
d98e8a6 (options-d98e8a6.tsv beside this file, read from the parser that arguments.py builds:
name and whether it is a switch or takes a value) classified as priced (paraplan reads it into the plan), costing
nothing (read and ignored, with why) or refused (it changes a step's time or memory, or the
model, in a way paraplan does not price), by the rules below, first match wins.

    python3 tools/megatron_options/classify.py > src/engines/megatron_option_table.cc

The options paraplan prices are the read set of src/engines/megatron_options.cc; the rules
classify the rest. A new Megatron-LM commit: regenerate the TSV from its parser (the engine-check
tool's mlm_check imports it) and run this again."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

REPORTING = "reports on the run (logs, metrics, profiles, timers): no effect on a step's time or memory that paraplan prices"
CHECKPOINTS = "checkpoints are written and read outside the iterations priced"
DATA = "the input pipeline and its tokenizer: overlapped with the step, not priced (the vocabulary is --vocab-size's or the tokenizer's)"
UPDATE = "a value of the parameter update (learning rate, decay, clipping, initialisation, loss scale), not its cost"
EVALUATION = "evaluation runs between iterations, not in them"
SETUP = "process setup, fault tolerance and restarts: before or around the iterations, not in them"
OTHER = "for another model or mode (inference, RL, retrieval, vision, BERT/T5, Mamba layers without --is-hybrid-model): pretrain_gpt.py's GPT training does not use it"
NUMERICS = "numerics of the same kernels (scaling, rounding, checks): the same time and memory"
REFUSED = "changes a step's time or memory, or the model, in a way paraplan does not price"

# (pattern on the option name, class, why); first match wins. c: costs nothing, r: refused.
BUCKETS = "bucket sizes and alignment of the same gradient reduction and parameter gather: the same bytes, whose overlap paraplan prices as a whole"
RAMP = "a ramp of the batch over the first samples: paraplan prices the steady --global-batch-size"

RULES = [
    # Refused first where a costless family's word would otherwise catch them.
    (r"^--(is-hybrid-model|hybrid-layer-pattern|hybrid-.*ratio|hybrid-context-parallel)$", "r",
     "a hybrid (Mamba) model: paraplan prices decoder-only attention models"),
    (r"^--perform-rl-step$", "r", "an RL step: paraplan prices pretraining steps"),
    (r"cuda-graph|^--optimizer-cuda-graph$", "r",
     "CUDA graphs change launch overheads and memory pools paraplan does not price"),
    (r"offload|^--cpu-offloading-|^--optimizer-cpu|^--pin-cpu|^--no-pin-cpu|^--overlap-cpu-optimizer", "r",
     "offloading to the host moves memory and adds transfers paraplan does not price"),
    (r"^--(decoder-num-layers|encoder-num-layers)$", "r",
     "changes how layers are split over stages; give --pipeline-model-parallel-layout (read) instead"),
    (r"^--(megatron-fsdp-.*dtype|output-logit-dtype)$", "r",
     "changes the optimizer's or gradients' bytes per parameter from what paraplan prices (fp32)"),
    (r"^--(recompute-modules|distribute-saved-activations|mhc-recompute-layer-num)$", "r",
     "recomputes another set of modules than paraplan prices (Megatron's selective default, or whole layers)"),
    (r"^--(deterministic-mode|batch-invariant-mode|batch-invariant-backend|disable-bf16-reduced-precision-matmul)$", "r",
     "slower deterministic or invariant kernels paraplan does not price"),
    (r"^--(empty-unused-memory-level)$", "r",
     "frees the allocator's cache every iteration: time paraplan does not price"),
    (r"^--(checkpoint-activations)$", "r",
     "the old spelling of full recomputation; give --recompute-granularity full (read)"),
    (r"^--(data-parallel-sharding-strategy|outer-dp-sharding-strategy)$", "r",
     "Megatron-FSDP's sharding, which paraplan does not price for Megatron-LM"),
    # Costless families.
    (r"^--(step-batch-size-schedule)$", "c", RAMP),
    (r"^--(no-align-grad-reduce|no-align-param-gather|disable-align-grad-reduce|ddp-num-buckets|ddp-pad-buckets-for-high-nccl-busbw|suggested-communication-unit-size|overlap-p2p-communication-warmup-flush)$", "c", BUCKETS),
    (r"^--(grpo-|decoder-seq-length|vocab-extra-ids)", "c", OTHER),
    (r"^--(fim-|trust-remote-code|use-one-sent-docs|use-same-sampling-seed-across-dp-ranks)", "c", DATA),
    (r"^--(fault-injector-|gpu-sniff-test-interval|train-sync-interval|verify-integrity|fake-process-group|help$)", "c", SETUP),
    (r"^--(mtp-loss-scaling-factor)$", "c", UPDATE),
    (r"^--(mup-|te-rng-tracker|use-te-activation-func|mscale)", "c", NUMERICS),
    (r"routing-trace", "c", REPORTING),
    (r"^--(decoupled-lr|decoupled-min-lr|head-lr-mult|lion-beta|muon-momentum|qk-clip)", "c", UPDATE),
    (r"log|tensorboard|wandb|timing|timer|profile|nvtx|straggler|one-logger|throughput|memory-history|record-|snapshot|^--exit-|signal|heartbeat|energy|flight-recorder|^--otel|^--app-tag|^--config-logger|^--dump-|^--run-workload|^--save-activations|^--save-dgrads|^--log-", "c", REPORTING),
    (r"ckpt|^--save|^--load|^--no-load|^--no-save|checkpoint|finetune|pretrained|non-persistent|^--persistent|^--auto-detect|^--use-dist-ckpt|^--async-save|^--async-strategy|reshardable|^--dist-ckpt|^--strict-fsdp|^--no-strict-fsdp|^--disable-strict-fsdp|^--use-persistent|^--refit", "c", CHECKPOINTS),
    (r"data|tokenizer|^--vocab-file|^--merge-file|^--split|mock|num-workers|mmap|^--sft|blend|tiktoken|reset-position-ids|reset-attention-mask|eod-mask-loss|object-storage|^--s3|^--(enable|disable)-msc|attention-mask-in-dataloader|num-dataset-builder|special-tokens|^--chat-template|^--per-dataset|^--mid-level-dataset|^--block-data|^--embedding-path|^--allow-ambiguous-pad|^--null-tokenizer|^--legacy-tokenizer|^--tokenizer|^--hf-|^--padded-vocab-size|^--no-pad-vocab-size|^--disable-pad-vocab-size|^--iter-per-epoch|^--iterations-to-skip|^--full-validation|^--multiple-validation", "c", DATA),
    (r"eval|^--test-|valid|^--skip-train", "c", EVALUATION),
    (r"distributed-backend|distributed-timeout|local-rank|use-cpu-initialization|lazy-mpu-init|nccl-communicator-config|^--ft-|fault-tolerance|^--enable-ft|^--inprocess|^--calc-ft|^--adlr-autoresume|gloo|^--disable-symmetric-registration|^--use-ring-exchange|^--create-all-gather-group|^--rank|^--world-size|^--replication|^--result-rejected|error-injection|^--rerun|^--check-for|^--check-weight-hash|^--enable-experimental|^--manual-gc|^--no-manual-gc|^--disable-manual-gc|^--calculate-per-token-loss|^--max-tokens-to-oom|^--phase-transition|^--decrease-batch-size-if-needed", "c", SETUP),
    (r"^--(inference|rl-|no-rl-|no-inference|retro|retriever|ict-|biencoder|bert|no-bert|dino|img-|patch-dim|num-channels|num-classes|classes-fraction|data-per-class|vision|swin|mask-|query-in-block|titles|t5|mamba|disable-mamba|kitchen|num-speculative|enable-chunked-prefill|mlp-chunks-for-prefill|cache-mla-latents|langrl|output-bert|sample-rate|logits-|indexer-log|refit|max-seqlen-per-dp|short-seq-prob|seq-length-per-|use-legacy-models|encoder-seq-length-ignored|use-mp-args-from-checkpoint-args|no-use-tokenizer|use-tokenizer)", "c", OTHER),
    (r"^--(apply-query-key-layer-scaling|apply-residual-connection-post-layernorm|apply-layernorm-1p|use-rope-scaling|rope-scaling-factor|rotary-scaling-factor|rotary-seq-len-interpolation-factor|rotary-interleaved|no-rope-freq|rope-type|yarn|no-yarn|openai-gelu|onnx-safe|fp8-amax|fp8-margin|fp8-interval|fp8-wgrad|no-fp8-wgrad|disable-fp8-wgrad|fp8-recipe|fp8-param-gather|first-last-layers-bf16|num-layers-at-start-in-bf16|num-layers-at-end-in-bf16|layernorm-zero-centered-gamma|norm-epsilon|attention-softmax-in-fp32|no-masked-softmax-fusion|no-bias-gelu-fusion|no-bias-dropout-fusion|no-bias-swiglu-fusion|no-persist-layer-norm|no-gradient-accumulation-fusion|no-rope-fusion|disable-jit-fuser|qk-l2-norm|apply-wd-to-qk-layernorm|no-weight-decay-cond-type|activation-func-clamp-value|quick-geglu|glu-linear-offset|attention-output-gate|data-parallel-random-init|moe-router-|moe-aux-loss|moe-z-loss|moe-input-jitter|moe-per-layer-logging|moe-router-load-balancing-type|moe-token-drop-policy|moe-use-legacy-grouped-gemm|moe-enable-routing-replay|moe-apply-probs-on-input|calculate-per-token-loss|cross-entropy-loss-fusion|cross-entropy-fusion-impl|no-create-attention-mask|disable-clone-scatter-output-in-embedding|use-precision-aware-optimizer)", "c", NUMERICS),
    (r"lr|adam|sgd|weight-decay|^--wd-|clip-grad|init-method|loss-scale|hysteresis|^--seed|warmup|decay|momentum|^--initial-loss|^--min-loss|^--no-initialization|^--embedding-init|^--override-opt", "c", UPDATE),
]


def classify(name, read, ignored):
    if name in read:
        return "p", ""
    for pattern, kind, why in RULES:
        if re.search(pattern, name):
            return kind, why
    if name in ignored:
        return "c", "no effect on a step's time or memory that paraplan prices"
    return "r", REFUSED


def main():
    src = open(os.path.join(ROOT, "src/engines/megatron_options.cc"), encoding="utf-8").read()
    read_block = src[src.index("megatron_read_options"):src.index("megatron_ignored_options")]
    ignored_block = src[src.index("megatron_ignored_options"):]
    read = set(re.findall(r'"(--[\w-]+)"', read_block))
    ignored = set(re.findall(r'"(--[\w-]+)"', ignored_block))
    rows = []
    for line in open(os.path.join(HERE, "options-d98e8a6.tsv"), encoding="utf-8"):
        name = line.split("\t")[0]
        rows.append((name,) + classify(name, read, ignored))
    reasons = sorted({why for _, kind, why in rows if why})
    out = sys.stdout
    out.write("// Generated by tools/megatron_options/classify.py from Megatron-LM d98e8a6's options\n"
              "// (tools/megatron_options/options-d98e8a6.tsv); do not edit: change the rules there.\n"
              '#include <iterator>\n\n#include "engines/megatron_options.h"\n\n'
              "namespace paraplan::engines {\n\n"
              "namespace {\n"
              "const char* const kWhy[] = {\n")
    for why in reasons:
        out.write(f'    "{why}",\n')
    out.write("};\n\n"
              "const MegatronOption kTable[] = {\n")
    for name, kind, why in rows:
        kind_name = {"p": "kPriced", "c": "kCostless", "r": "kRefused"}[kind]
        index = f"kWhy[{reasons.index(why)}]" if why else '""'
        out.write(f'    {{"{name}", MegatronOption::Kind::{kind_name}, {index}}},\n')
    out.write("};\n}  // namespace\n\n"
              "const std::vector<MegatronOption>& megatron_option_table() {\n"
              "  static const std::vector<MegatronOption> table(std::begin(kTable), std::end(kTable));\n"
              "  return table;\n}\n\n}  // namespace paraplan::engines\n")
    counts = {k: sum(1 for _, kind, _ in rows if kind == k) for k in "pcr"}
    print(f"{len(rows)} options: {counts['p']} priced, {counts['c']} costless, "
          f"{counts['r']} refused", file=sys.stderr)


if __name__ == "__main__":
    main()
