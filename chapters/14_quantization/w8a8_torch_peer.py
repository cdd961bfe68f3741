"""PyTorch's dynamically quantised Linear, timed for chapter 14's W8A8 bench (bench_w8a8.cc).

torch.ao.quantization.quantize_dynamic turns nn.Linear(k, n) into a module whose weights are
INT8 per output channel and whose every call quantises its FP32 input (per tensor, asymmetric
u8), runs the INT8 GEMM and dequantises: FP32 in, FP32 out, the same work as the book's
w8a8_linear (which quantises per token). For each shape and each quantised engine this PyTorch
build offers, it prints one JSON line with the median over repetitions of the mean time of a
call; the bench keeps the fastest engine.

Run by /usr/bin/python3 (Debian's python3-torch):
  w8a8_torch_peer.py --shapes 1x1024x1024,64x4096x4096 --threads 1 --reps 7
"""
import argparse
import json
import statistics
import time

import torch


def time_calls(fn, min_seconds):
    """Mean seconds per call over enough calls to last min_seconds (after a warm-up)."""
    for _ in range(3):
        fn()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / calls
        calls *= 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", required=True, help="m x n x k, comma separated")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--min-seconds", type=float, default=0.2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(14)
    engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
    for shape in args.shapes.split(","):
        m, n, k = (int(v) for v in shape.split("x"))
        x = torch.randn(m, k)
        for engine in engines:
            torch.backends.quantized.engine = engine
            model = torch.nn.Sequential(torch.nn.Linear(k, n))
            qmodel = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
            with torch.inference_mode():
                reference = model(x)
                error = (qmodel(x) - reference).abs().max().item() / reference.abs().max().item()
                times = [time_calls(lambda: qmodel(x), args.min_seconds) for _ in range(args.reps)]
            median = statistics.median(times)
            print(json.dumps({
                "m": m, "n": n, "k": k, "threads": args.threads, "engine": engine,
                "ms": 1e3 * median,
                "spread": (max(times) - min(times)) / median,
                "max_rel_error": error,
                "torch": torch.__version__,
                "cpu_capability": torch.backends.cpu.get_cpu_capability()
                if hasattr(torch.backends, "cpu") else "unknown",
            }), flush=True)


if __name__ == "__main__":
    main()
