"""Models the package ships to prove the profile → plan → run loop on: a GPT-style decoder (the
model the runtime trains), written with plain torch.nn so torch.fx traces it."""

import math

import torch
from torch import nn


class Block(nn.Module):
    """A pre-norm decoder block: causal self-attention and a 4h MLP, each with a residual."""

    def __init__(self, hidden, heads, seq_len):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"hidden size {hidden} is not divisible by {heads} heads")
        self.heads = heads
        self.head_dim = hidden // heads
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * hidden, hidden)
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def forward(self, x):
        b, s, h = x.shape[0], x.shape[1], x.shape[2]
        qkv = self.qkv(self.norm1(x)).reshape(b, s, 3, self.heads, self.head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        causal = torch.ones_like(scores[0, 0]).triu(1).bool()  # (tensor methods: fx traces them)
        scores = scores.masked_fill(causal, float("-inf"))
        attention = torch.matmul(scores.softmax(-1), v).transpose(1, 2).reshape(b, s, h)
        x = x + self.proj(attention)
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class GPT(nn.Module):
    """Token and position embeddings, `layers` decoder blocks, a final norm and the LM head."""

    def __init__(self, layers=4, hidden=256, heads=4, seq_len=128, vocab=1024):
        super().__init__()
        self.seq_len = seq_len
        self.embed = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(seq_len, hidden)
        self.blocks = nn.Sequential(*[Block(hidden, heads, seq_len) for _ in range(layers)])
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens):
        positions = torch.ones_like(tokens[0]).cumsum(0) - 1  # 0 .. s - 1
        x = self.embed(tokens) + self.position(positions)
        return self.head(self.norm(self.blocks(x)))


def gpt(layers=4, hidden=256, heads=4, seq_len=128, vocab=1024):
    """A GPT-style decoder (the factory `python3 -m paraplan profile paraplan.models:gpt` uses)."""
    return GPT(layers=layers, hidden=hidden, heads=heads, seq_len=seq_len, vocab=vocab)
