#!/usr/bin/env bash
# torchtitan b5bcd76 (its Python configurations; `--export torchtitan` writes the TOML of 238fa99):
# writes paraplan_recipe.py, then trains with --module paraplan_recipe --config paraplan_plan.
# Run it on each of the 8 nodes from the torchtitan checkout, with NODE_RANK, MASTER_ADDR
# and MASTER_PORT as your scheduler gives them.
# Check it without GPUs first: MODULE=paraplan_recipe CONFIG=paraplan_plan NGPU=64 COMM_MODE=fake_backend ./run_train.sh
set -euo pipefail
cat > paraplan_recipe.py <<'PARAPLAN_RECIPE'
"""llama3-70b on 64 GPUs as paraplan planned it: a torchtitan b5bcd76 configuration."""
from torchtitan.components.data import ConcatThenSplitPackingConfig, GrainDataLoader
from torchtitan.config import CompileConfig, ParallelismConfig
from torchtitan.distributed.activation_checkpoint import FullAC
from torchtitan.hf_datasets.text_datasets import DATASETS
from torchtitan.models.llama3 import model_registry
from torchtitan.models.llama3.config_registry import llama3_70b


def paraplan_plan():
    config = llama3_70b()
    config.model_spec = model_registry("70B", attn_backend="flex_flash")
    # Data: torchtitan's in-repository C4 sample and test tokenizer, so it runs without
    # downloads (the model's vocabulary is its flavor's); for your run set the dataset,
    # hf_assets_path (scripts/download_hf_assets.py) and training.steps.
    config.hf_assets_path = "./tests/assets/tokenizer"
    config.dataloader = GrainDataLoader.Config(
        dataset=ConcatThenSplitPackingConfig(dataset=DATASETS["c4_test"]))
    config.training.steps = 100
    config.training.max_context_length = 8192
    config.training.num_tokens_per_microbatch_per_dp_rank = 65536  # 8 × 8192 tokens
    config.training.num_tokens_per_train_step = 1048576  # 128 × 8192 tokens
    config.training.dtype = "float32"
    config.training.mixed_precision_param = "bfloat16"
    # Priced without CUDA graphs (and they do not run with pipelines or expert parallelism)
    config.training.disable_cuda_graphs = True
    config.parallelism = ParallelismConfig(
        data_parallel_replicate_degree=1,
        data_parallel_shard_degree=1,
        fsdp_reshard_after_forward="always",
        tensor_parallel_degree=8,
        enable_sequence_parallel=True,
        context_parallel_degree=2,
        expert_parallel_degree=1,
        pipeline_parallel_degree=4,
        pipeline_parallel_schedule="Interleaved1F1B",
        num_pp_microbatches=16,
        module_fqns_per_model_part=[
            ["tok_embeddings", "layers.0", "layers.1", "layers.2", "layers.3"],
            ["layers.4", "layers.5", "layers.6", "layers.7"],
            ["layers.8", "layers.9", "layers.10", "layers.11"],
            ["layers.12", "layers.13", "layers.14", "layers.15"],
            ["layers.16", "layers.17", "layers.18", "layers.19"],
            ["layers.20", "layers.21", "layers.22", "layers.23"],
            ["layers.24", "layers.25", "layers.26", "layers.27"],
            ["layers.28", "layers.29", "layers.30", "layers.31"],
            ["layers.32", "layers.33", "layers.34", "layers.35"],
            ["layers.36", "layers.37", "layers.38", "layers.39"],
            ["layers.40", "layers.41", "layers.42", "layers.43"],
            ["layers.44", "layers.45", "layers.46", "layers.47"],
            ["layers.48", "layers.49", "layers.50", "layers.51"],
            ["layers.52", "layers.53", "layers.54", "layers.55"],
            ["layers.56", "layers.57", "layers.58", "layers.59"],
            ["layers.60", "layers.61", "layers.62", "layers.63"],
            ["layers.64", "layers.65", "layers.66", "layers.67"],
            ["layers.68", "layers.69", "layers.70", "layers.71"],
            ["layers.72", "layers.73", "layers.74", "layers.75"],
            ["layers.76", "layers.77", "layers.78", "layers.79", "norm", "lm_head"],
        ],
    )
    config.activation_checkpoint = FullAC.Config()
    config.compile = CompileConfig(enable=False, components=["model", "loss"],
                                   enable_async_tensor_parallel=False)
    return config
PARAPLAN_RECIPE
export PYTORCH_ALLOC_CONF="expandable_segments:True"
torchrun --nnodes=8 --nproc-per-node=8 --node-rank="${NODE_RANK:?}" \
  --master-addr="${MASTER_ADDR:?}" --master-port="${MASTER_PORT:-29500}" \
  -m torchtitan.train --module paraplan_recipe --config paraplan_plan
