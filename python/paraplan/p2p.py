"""Point-to-point transfers between stages: which ranks run a micro-batch of another stage (as the
core's schedule deals them), the tag of each message, and the sends and receives themselves, in
one communicator per direction."""

import time

import torch
import torch.distributed as dist


class PointToPoint:
    """The transfers of one rank. `runs[stage][j]`: the replica of `stage` that runs micro-batch
    j (from the core's schedule); tensor-parallel index 0 sends for its replica."""

    def __init__(self, layout, partition, groups, runs, device, record):
        self.layout, self.partition, self.groups = layout, partition, groups
        self.runs, self.device, self.record = runs, device, record

    def peers(self, stage, microbatch):
        r = self.runs[stage][microbatch]
        return [self.layout.of[(stage, r, k)] for k in range(self.layout.stages[stage][1])]

    def tag(self, value, microbatch, backward):
        index = self.partition.nodes.index(value)
        return ((microbatch * len(self.partition.nodes) + index) * 2 + int(backward)) % (1 << 30)

    def receive(self, value, producer, microbatch, backward, consumer=None):
        shape, dtype, _ = self.partition.meta[value]
        source_stage = consumer if backward else producer
        source = self.peers(source_stage, microbatch)[0]
        buffer = torch.empty(shape, dtype=dtype, device=self.device)
        start = time.perf_counter()
        dist.recv(buffer, source, tag=self.tag(value, microbatch, backward),
                  group=self.groups["backward" if backward else "forward"])
        self.record(f"recv {'gradient' if backward else 'activation'} mb {microbatch}",
                    "receive", 1, start, microbatch)
        return buffer

    def send(self, tensor, value, stage, microbatch, backward, pending):
        start = time.perf_counter()
        tensor = tensor.contiguous()
        for peer in self.peers(stage, microbatch):  # the tensor is kept until the send is done
            pending.append((dist.isend(tensor, peer, tag=self.tag(value, microbatch, backward),
                                       group=self.groups["backward" if backward else "forward"]),
                            tensor))
        self.record(f"send {'gradient' if backward else 'activation'} mb {microbatch}", "send",
                    1, start, microbatch)
