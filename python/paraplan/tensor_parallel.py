"""Megatron-style tensor parallelism for the package GPT's decoder blocks: the attention's QKV
projection and the MLP's first linear split by output columns (each rank keeps whole heads),
the attention output projection and the MLP's second linear split by input rows, one
all-reduce after each in the forward pass and one before each in the backward pass; layer norms
and the row-parallel biases stay whole on every rank (their gradients agree because the
all-reduces make every rank's input gradients equal)."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from .models import Block


class _CopyToGroup(torch.autograd.Function):
    """Identity forward; all-reduce of the gradient backward (Megatron's f)."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromGroup(torch.autograd.Function):
    """All-reduce forward; identity backward (Megatron's g)."""

    @staticmethod
    def forward(ctx, x, group):
        out = x.contiguous().clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _rows(weight, index, parts, blocks=1):
    """Rows of `weight` for rank `index` of `parts`, taken in each of `blocks` equal row blocks
    (QKV: the query, key and value blocks each give the rank its heads)."""
    per_block = weight.shape[0] // blocks
    width = per_block // parts
    return torch.cat([weight[b * per_block + index * width: b * per_block + (index + 1) * width]
                      for b in range(blocks)])


class ParallelBlock(nn.Module):
    """Rank `index` of `parts` of a :class:`paraplan.models.Block`."""

    def __init__(self, block, index, parts, group, name):
        super().__init__()
        if block.heads % parts:
            raise ValueError(f"{name}: {block.heads} heads cannot be split over "
                             f"{parts} tensor-parallel ranks")
        if block.fc1.out_features % parts:
            raise ValueError(f"{name}: MLP width {block.fc1.out_features} is not divisible by "
                             f"{parts}")
        self.name, self.index, self.parts, self.group = name, index, parts, group
        self.heads, self.head_dim, self.scale = block.heads // parts, block.head_dim, block.scale
        self.norm1, self.norm2, self.act = block.norm1, block.norm2, block.act
        copy = lambda t: nn.Parameter(t.detach().clone())  # noqa: E731
        self.qkv_weight = copy(_rows(block.qkv.weight, index, parts, 3))
        self.qkv_bias = copy(_rows(block.qkv.bias, index, parts, 3))
        self.proj_weight = copy(_rows(block.proj.weight.t(), index, parts).t())
        self.proj_bias = copy(block.proj.bias)
        self.fc1_weight = copy(_rows(block.fc1.weight, index, parts))
        self.fc1_bias = copy(_rows(block.fc1.bias, index, parts))
        self.fc2_weight = copy(_rows(block.fc2.weight.t(), index, parts).t())
        self.fc2_bias = copy(block.fc2.bias)

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        y = _CopyToGroup.apply(self.norm1(x), self.group)
        qkv = F.linear(y, self.qkv_weight, self.qkv_bias)
        qkv = qkv.reshape(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        causal = torch.ones_like(scores[0, 0]).triu(1).bool()
        scores = scores.masked_fill(causal, float("-inf"))
        attention = torch.matmul(scores.softmax(-1), v).transpose(1, 2)
        attention = attention.reshape(b, s, self.heads * self.head_dim)
        x = x + _ReduceFromGroup.apply(F.linear(attention, self.proj_weight), self.group) \
            + self.proj_bias
        y = _CopyToGroup.apply(self.norm2(x), self.group)
        hidden = self.act(F.linear(y, self.fc1_weight, self.fc1_bias))
        return x + _ReduceFromGroup.apply(F.linear(hidden, self.fc2_weight), self.group) \
            + self.fc2_bias

    def full_parameters(self):
        """The block's parameters, whole, by their names in the original module (an all-gather
        over the tensor-parallel group; every rank gets them)."""

        def gather(shard, dim, blocks=1):
            pieces = [torch.empty_like(shard) for _ in range(self.parts)]
            dist.all_gather(pieces, shard.detach().contiguous(), group=self.group)
            if blocks == 1:
                return torch.cat(pieces, dim)
            chunks = [p.chunk(blocks, dim) for p in pieces]
            return torch.cat([c[b] for b in range(blocks) for c in chunks], dim)

        out = {}
        for norm in ("norm1", "norm2"):
            for field in ("weight", "bias"):
                out[f"{self.name}.{norm}.{field}"] = getattr(getattr(self, norm),
                                                             field).detach().clone()
        out[f"{self.name}.qkv.weight"] = gather(self.qkv_weight, 0, 3)
        out[f"{self.name}.qkv.bias"] = gather(self.qkv_bias, 0, 3)
        out[f"{self.name}.proj.weight"] = gather(self.proj_weight, 1)
        out[f"{self.name}.proj.bias"] = self.proj_bias.detach().clone()
        out[f"{self.name}.fc1.weight"] = gather(self.fc1_weight, 0)
        out[f"{self.name}.fc1.bias"] = gather(self.fc1_bias, 0)
        out[f"{self.name}.fc2.weight"] = gather(self.fc2_weight, 1)
        out[f"{self.name}.fc2.bias"] = self.fc2_bias.detach().clone()
        return out


def check_part(part, parts, layer):
    """The GPT blocks of `part` (name, module), if it can be split over `parts` ranks; else a
    ValueError saying why (parameters outside the blocks, heads or width not divisible)."""
    blocks = [(name, m) for name, m in part.named_modules() if isinstance(m, Block)]
    inside = {id(p) for _, m in blocks for p in m.parameters()}
    others = [name for name, p in part.named_parameters() if id(p) not in inside]
    if others:
        raise ValueError(f"layer {layer} has parameters outside the GPT's attention and MLP "
                         f"blocks ({', '.join(others[:3])}); tensor parallelism (t > 1) splits "
                         f"only those blocks: give this layer a stage with tensor_parallel 1")
    for name, block in blocks:
        if block.heads % parts or block.fc1.out_features % parts:
            raise ValueError(f"layer {layer}: {block.heads} heads and MLP width "
                             f"{block.fc1.out_features} must both divide by {parts} "
                             f"tensor-parallel ranks")
    return blocks


def shard_part(part, index, parts, group, layer_names, target, module_names):
    """`part` (one group of the split module) with every GPT block in it replaced by rank
    `index` of its tensor-parallel split; a part with other parameters cannot be split.
    `module_names`: each module's name in the original model, by identity."""
    blocks = check_part(part, parts, layer_names[int(str(target).split("_")[1])])
    for name, block in blocks:
        parent_name, _, child = name.rpartition(".")
        parent = part.get_submodule(parent_name) if parent_name else part
        setattr(parent, child,
                ParallelBlock(block, index, parts, group, module_names.get(id(block), name)))
    return part
