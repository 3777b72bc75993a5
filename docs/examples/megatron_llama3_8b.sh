#!/bin/bash
# Llama 3 8B pretraining with Megatron-LM on 8 nodes of 8 H100 (64 GPUs), as a user might launch
# it: tensor parallelism across the node, full recomputation of every layer.
#   paraplan evaluate --from megatron docs/examples/megatron_llama3_8b.sh --cluster dgx-h100
export CUDA_DEVICE_MAX_CONNECTIONS=1

CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes 8 --node_rank $NODE_RANK \
    --master_addr $MASTER_ADDR --master_port 6000 \
    pretrain_gpt.py \
    --num-layers 32 \
    --hidden-size 4096 \
    --ffn-hidden-size 14336 \
    --num-attention-heads 32 \
    --group-query-attention \
    --num-query-groups 8 \
    --seq-length 8192 \
    --max-position-embeddings 8192 \
    --position-embedding-type rope \
    --rotary-base 500000 \
    --normalization RMSNorm \
    --swiglu \
    --untie-embeddings-and-output-weights \
    --disable-bias-linear \
    --attention-dropout 0.0 \
    --hidden-dropout 0.0 \
    --vocab-size 128256 \
    --tokenizer-type HuggingFaceTokenizer \
    --tokenizer-model meta-llama/Meta-Llama-3-8B \
    --micro-batch-size 1 \
    --global-batch-size 512 \
    --tensor-model-parallel-size 8 \
    --pipeline-model-parallel-size 1 \
    --sequence-parallel \
    --recompute-granularity full \
    --recompute-method uniform \
    --recompute-num-layers 1 \
    --use-distributed-optimizer \
    --overlap-grad-reduce \
    --overlap-param-gather \
    --bf16 \
    --train-iters 100000 \
    --lr 3e-4 \
    --min-lr 3e-5 \
    --lr-decay-style cosine \
    --lr-warmup-iters 2000 \
    --weight-decay 0.1 \
    --clip-grad 1.0 \
    --adam-beta1 0.9 \
    --adam-beta2 0.95 \
    --init-method-std 0.02 \
    --data-path /data/llama3/text_document \
    --split 99,1,0 \
    --save /checkpoints/llama3-8b \
    --load /checkpoints/llama3-8b \
    --save-interval 1000 \
    --eval-interval 1000 \
    --eval-iters 10 \
    --log-interval 10
