#!/bin/bash
# Llama 3 8B pretraining with Megatron-Bridge on 2 nodes of 8 H100 (16 GPUs), as a user might
# launch it: the vanilla GPT recipe with Llama's shape as overrides, tensor parallelism across the
# node, full recomputation of every layer.
#   paraplan evaluate --from bridge docs/examples/megatron_bridge_llama3_8b.sh --cluster dgx-h100
set -euo pipefail
GPUS_PER_NODE=8
NNODES=${NNODES:-2}
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nnodes=${NNODES} --nproc-per-node=${GPUS_PER_NODE} --node-rank="${NODE_RANK:-0}" \
  --master-addr="${MASTER_ADDR:-localhost}" --master-port=29500 \
  scripts/training/run_recipe.py --recipe vanilla_gpt_pretrain_1gpu_h100_bf16_config \
  --mode pretrain --dataset mock \
  -tp 8 -gb 256 -mb 1 -sl 8192 \
  model.num_layers=32 model.hidden_size=4096 model.ffn_hidden_size=14336 \
  model.num_attention_heads=32 model.num_query_groups=8 \
  model.gated_linear_unit=true model.activation_func=silu model.normalization=RMSNorm \
  model.add_bias_linear=false model.share_embeddings_and_output_weights=false \
  model.position_embedding_type=rope model.rotary_base=500000 \
  model.hidden_dropout=0.0 model.attention_dropout=0.0 \
  tokenizer.tokenizer_type=NullTokenizer tokenizer.vocab_size=128256 \
  model.sequence_parallel=true \
  model.recompute_granularity=full model.recompute_method=uniform model.recompute_num_layers=1 \
  ddp.overlap_grad_reduce=true ddp.overlap_param_gather=true \
  optimizer.lr=3e-4 checkpoint.save=/checkpoints/llama3-8b
