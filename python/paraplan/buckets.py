"""Gradient buckets: the stage's gradients in one buffer, all-reduced over its data-parallel
group after the backward or, bucket by bucket, during its last backward."""

import torch
import torch.distributed as dist

from .graphs import tensor_bytes
from .ranks import RunError


class GradientBuffer:
    """One gradient buffer for the stage, allocated once, for the data-parallel all-reduce:
    gradients are copied in, reduced in place, copied back (fresh 100 MB buffers every iteration
    cost more in page faults than the all-reduce itself; letting autograd accumulate into views
    of it made the backward twice as slow here)."""

    def __init__(self, stage_index, parameters, device):
        if len({p.dtype for p in parameters}) > 1:
            raise RunError(f"stage {stage_index} mixes parameter dtypes "
                           f"({sorted({str(p.dtype) for p in parameters})}); the runtime "
                           f"keeps one gradient buffer per stage")
        self.parameters = parameters
        self.gradients = torch.zeros(sum(p.numel() for p in parameters),
                                     dtype=parameters[0].dtype if parameters else torch.float32,
                                     device=device)
        self.gradient_views, offset = [], 0
        for p in parameters:
            self.gradient_views.append(self.gradients[offset:offset + p.numel()].view_as(p))
            offset += p.numel()

    def all_reduce(self, group):
        for p, view in zip(self.parameters, self.gradient_views):
            if p.grad is None:
                view.zero_()
            else:
                view.copy_(p.grad)
        dist.all_reduce(self.gradients, group=group)
        for p, view in zip(self.parameters, self.gradient_views):
            if p.grad is None:
                p.grad = view.clone()
            else:
                p.grad.copy_(view)


class OverlappedReduce:
    """The stage's gradient all-reduce overlapped with its last backward pass, as DDP does it:
    the gradient buffer cut into buckets (`bucket_mib`, default 25 MiB) in reverse parameter
    order (the backward
    reaches the last layers first), each bucket all-reduced asynchronously once every gradient in
    it is final, the buckets launched strictly in order so every replica issues the same
    collectives in the same order."""

    def __init__(self, stage, bucket_bytes):
        self.stage = stage
        self.buckets, current, size = [], [], 0
        for index in reversed(range(len(stage.parameters))):
            current.append(index)
            size += tensor_bytes(stage.parameters[index])
            if size >= bucket_bytes:
                self.buckets.append(current)
                current, size = [], 0
        if current:
            self.buckets.append(current)
        self.bucket_of = {i: b for b, members in enumerate(self.buckets) for i in members}
        self.hooks, self.works = [], []

    def _slice(self, bucket):
        members = self.buckets[bucket]  # consecutive indices, descending
        views = self.stage.gradient_views
        start = views[members[-1]].data_ptr() - self.stage.gradients.data_ptr()
        end = views[members[0]].data_ptr() - self.stage.gradients.data_ptr() + \
            views[members[0]].numel() * views[members[0]].element_size()
        size = self.stage.gradients.element_size()
        return self.stage.gradients[start // size:end // size]

    def arm(self):
        self.missing = [len(members) for members in self.buckets]
        self.done = [False] * len(self.stage.parameters)
        self.next, self.works = 0, []
        for index, p in enumerate(self.stage.parameters):
            self.hooks.append(p.register_hook(self._hook(index)))

    def _hook(self, index):
        def hook(grad):  # the whole gradient of this backward, before it is accumulated
            p, view = self.stage.parameters[index], self.stage.gradient_views[index]
            view.copy_(grad)
            if p.grad is not None:
                view.add_(p.grad)
            self.done[index] = True
            self.missing[self.bucket_of[index]] -= 1
            self._launch(False)
            return grad
        return hook

    def _launch(self, everything):
        while self.next < len(self.buckets) and (everything or self.missing[self.next] == 0):
            self.works.append(dist.all_reduce(self._slice(self.next),
                                              group=self.stage.dp_group, async_op=True))
            self.next += 1

    def finish(self):
        for handle in self.hooks:
            handle.remove()
        self.hooks = []
        for index, p in enumerate(self.stage.parameters):  # no gradient in the last backward
            if not self.done[index]:
                view = self.stage.gradient_views[index]
                view.copy_(p.grad) if p.grad is not None else view.zero_()
        self.left = len(self.buckets) - self.next  # buckets the backward did not start
        self._launch(True)
        for work in self.works:
            work.wait()
        for p, view in zip(self.stage.parameters, self.stage.gradient_views):
            if p.grad is None:
                p.grad = view.clone()
            else:
                p.grad.copy_(view)
