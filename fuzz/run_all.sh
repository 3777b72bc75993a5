#!/usr/bin/env bash
# Runs every fuzz target for SECONDS on its seed corpus; exits non-zero if any finds a crash, a
# hang, a leak or a sanitizer report (the input is kept in BUILD/findings/TARGET/).
#   fuzz/run_all.sh BUILD_DIR SECONDS
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1
seconds=$2
onnx_testdata=/usr/share/libonnx-testdata/data

seeds() {  # seeds TARGET: the files and folders its corpus starts from
  case "$1" in
    fuzz_piper) echo data/piper/*.json ;;
    fuzz_native_json) echo fuzz/seeds/native/* tests/data/bad/*.json ;;
    fuzz_native_yaml) echo fuzz/seeds/native_yaml/* ;;
    fuzz_dapple) echo data/dapple/*.txt ;;
    fuzz_onnx) echo data/onnx/*.onnx \
      $(ls -d "$onnx_testdata"/pytorch-converted/test_{Conv2d,Linear,MaxPool2d,BatchNorm2d_eval,Softmax,Embedding}/model.onnx \
              "$onnx_testdata"/node/test_{conv,maxunpool,qlinearconv,maxpool,averagepool,lppool}*/model.onnx 2>/dev/null) ;;
    fuzz_hf_config) echo tests/data/hf/*.json tests/data/hf-configs/*/config.json ;;
    fuzz_vtrain_csv) echo fuzz/seeds/vtrain_csv/* ;;
    fuzz_plan_file) echo fuzz/seeds/plan_file/* ;;
    fuzz_mpt_table) echo fuzz/seeds/mpt_table/* ;;
    fuzz_published_runs) echo data/moe/*.json tests/data/bad/published_*.json ;;
    fuzz_nemo_table) echo data/nemo-h100/nemo_h100.tsv ;;
    fuzz_launch) echo docs/examples/megatron_llama3_8b.sh docs/examples/nemo_llama3_8b.yaml docs/examples/deepspeed_llama3_8b.json docs/examples/torchtitan_llama3_8b.toml docs/examples/megatron_bridge_llama3_8b.sh docs/examples/torchtitan_recipe_llama3_70b.sh ;;
  esac
}

failed=()
for target in fuzz_piper fuzz_native_json fuzz_native_yaml fuzz_dapple fuzz_onnx fuzz_hf_config \
              fuzz_vtrain_csv fuzz_plan_file fuzz_mpt_table fuzz_published_runs \
              fuzz_nemo_table fuzz_launch; do
  corpus=$build/corpus/$target
  findings=$build/findings/$target
  mkdir -p "$corpus" "$findings"
  # Seeds are copied under their path (the testdata models are all called model.onnx).
  for seed in $(seeds "$target"); do [ -f "$seed" ] && cp -n "$seed" "$corpus/$(echo "$seed" | tr / _)"; done
  echo "== $target: $seconds s, corpus $(ls "$corpus" | wc -l) files" >&2
  if ! "$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" 2> "$build/$target.log"; then
    failed+=("$target")
    tail -n 40 "$build/$target.log" >&2
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build/$target.log" | tr '\n' ' ' >&2
  echo >&2
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in $build/findings/)" >&2
  exit 1
fi
echo "fuzz: no findings in $seconds s per target" >&2
