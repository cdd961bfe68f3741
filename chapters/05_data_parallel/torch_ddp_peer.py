"""The benchmark's peer: PyTorch DDP (gloo backend) training the same GPT on the same addition task.

Run by bench.cc with Debian's interpreter (/usr/bin/python3, python3-torch 1.13); prints one JSON line
from rank 0: {"ms_per_step": ..., "tokens_per_step": ..., "tokens_per_s": ..., "ranks": ...}.

The model is chapter 4's: token + position embeddings, pre-LayerNorm blocks with causal multi-head
attention and a GELU (tanh) MLP of width 4C, a final LayerNorm and an LM head tied to the token
embedding; cross-entropy on the answer tokens only. The step is the stage's: the global micro-batch
split over the ranks, `accumulation` micro-batches with DDP's no_sync() on all but the last, global
gradient-norm clipping to 1.0, AdamW (betas 0.9, 0.95, weight decay 0.1 on matrices). One intra-op
thread per process, as the book gives each rank one core; bench.cc also sets OPENBLAS_NUM_THREADS=1
(OpenBLAS's own pool would otherwise start one thread per core in every process) and passes on the
OpenBLAS core and ATen ISA it chose for this CPU (common/peers.h). The JSON line says which ran.
"""
import argparse
import json
import math
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel


class Block(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(c, eps=1e-5)
        self.qkv = nn.Linear(c, 3 * c)
        self.out = nn.Linear(c, c)
        self.ln2 = nn.LayerNorm(c, eps=1e-5)
        self.fc = nn.Linear(c, 4 * c)
        self.proj = nn.Linear(4 * c, c)

    def forward(self, x, mask):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        att = att.masked_fill(mask[:t, :t], float("-inf")).softmax(-1)
        x = x + self.out((att @ v).transpose(1, 2).reshape(b, t, c))
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab, context, layers, c, heads):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.wpe = nn.Embedding(context, c)
        self.blocks = nn.ModuleList(Block(c, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(c, eps=1e-5)
        # A plain attribute, not a buffer: gloo cannot broadcast bool tensors, and DDP would try.
        self.mask = torch.ones(context, context, dtype=torch.bool).triu(1)
        for p in self.parameters():  # GPT-2's initialisation, as chapter 4's
            if p.dim() > 1:
                nn.init.normal_(p, 0.0, 0.02)
            elif p is not None:
                nn.init.zeros_(p)
        for block in self.blocks:
            nn.init.ones_(block.ln1.weight), nn.init.ones_(block.ln2.weight)
        nn.init.ones_(self.lnf.weight)

    def forward(self, tokens, targets):
        t = tokens.shape[1]
        x = self.wte(tokens) + self.wpe(torch.arange(t))
        for block in self.blocks:
            x = block(x, self.mask)
        logits = self.lnf(x) @ self.wte.weight.t()  # the tied head
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                               ignore_index=-1)


def addition_batch(generator, digits, rows):
    """rows examples "a+b=" + the sum reversed, as chapter 4's AdditionTask (tokens 0-9, 10 '+', 11 '=')."""
    limit = 10 ** digits
    a = torch.randint(0, limit, (rows,), generator=generator)
    b = torch.randint(0, limit, (rows,), generator=generator)
    s = a + b
    def number(x, n):  # most significant digit first
        return torch.stack([(x // 10 ** (n - 1 - i)) % 10 for i in range(n)], dim=1)
    answer = torch.stack([(s // 10 ** i) % 10 for i in range(digits + 1)], dim=1)  # reversed
    seq = torch.cat([number(a, digits), torch.full((rows, 1), 10), number(b, digits),
                     torch.full((rows, 1), 11), answer], dim=1)
    tokens, targets = seq[:, :-1], seq[:, 1:].clone()
    targets[:, : 2 * digits + 1] = -1  # only the answer is graded
    return tokens.contiguous(), targets.contiguous()


def run_rank(rank, args, port, queue):
    torch.set_num_threads(1)  # with OPENBLAS_NUM_THREADS=1: one core per rank, as ours
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    torch.manual_seed(1234)  # the same initial weights on every rank (DDP also broadcasts them)
    context = 3 * args.digits + 2
    model = Gpt(12, context, args.layers, args.d_model, args.heads)
    ddp = DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb)
    decay = [p for p in model.parameters() if p.dim() > 1]
    no_decay = [p for p in model.parameters() if p.dim() <= 1]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    generator = torch.Generator().manual_seed(99 + rank)
    local = args.micro_batch // args.ranks
    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=False)
        for micro in range(args.accumulation):
            tokens, targets = addition_batch(generator, args.digits, local)
            if micro < args.accumulation - 1:
                with ddp.no_sync():  # accumulate locally; all-reduce on the last micro-batch only
                    (ddp(tokens, targets) / args.accumulation).backward()
            else:
                (ddp(tokens, targets) / args.accumulation).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
    if rank == 0:
        queue.put(statistics.median(times))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("ranks", 2), ("layers", 4), ("d-model", 128), ("heads", 4),
                          ("digits", 2), ("micro-batch", 16), ("accumulation", 2), ("steps", 12),
                          ("warmup", 2)]:
        parser.add_argument("--" + name, type=int, default=default)
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    args = parser.parse_args()
    if args.micro_batch % args.ranks:
        sys.exit(f"torch_ddp_peer: {args.ranks} ranks do not divide the micro-batch {args.micro_batch}")
    with socket.socket() as s:  # a free port for gloo's rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    context = mp.get_context("spawn")
    queue = context.SimpleQueue()
    mp.spawn(run_rank, args=(args, port, queue), nprocs=args.ranks, join=True)
    seconds = queue.get()
    tokens = args.micro_batch * args.accumulation * (3 * args.digits + 2)
    print(json.dumps({"ms_per_step": 1e3 * seconds, "tokens_per_step": tokens,
                      "tokens_per_s": tokens / seconds, "ranks": args.ranks,
                      "torch": torch.__version__, "configuration": configuration()}))


def configuration():
    """ATen's vector ISA, the intra-op threads, and the OpenBLAS core and threads of this process."""
    import ctypes
    isa = next((line.split(":", 1)[1].strip() for line in torch.__config__.show().splitlines()
                if "CPU capability usage" in line), "?")
    text = f"ATen {isa}, {torch.get_num_threads()} intra-op thread(s)"
    try:
        blas = ctypes.CDLL("libopenblas.so.0")
        blas.openblas_get_corename.restype = ctypes.c_char_p
        text += (f"; OpenBLAS core {blas.openblas_get_corename().decode()}, "
                 f"{blas.openblas_get_num_threads()} thread(s)")
    except OSError:
        text += "; OpenBLAS not found"
    return text


if __name__ == "__main__":
    main()
