#!/usr/bin/env python3
"""Measures, on one NVIDIA GPU, what the uncalibrated roofline of llmcap assumes.

Times the weight matrices of one Llama-3.1-8B layer (and its LM head) as bf16 matrix products
through cuBLAS (PyTorch), for 1 to 8192 activation rows, plus a device-to-device copy. For each
product it prints the achieved bytes/s and FLOP/s as fractions of the datasheet peaks given on
the command line, and the error of llmcap's roofline for that operator:
    predicted = max(bytes / (peak_bw x bw_fraction), flops / (peak_flops x compute_fraction))
Not part of the build or the tests: a measurement tool for a machine with a GPU and PyTorch.

Usage: roofline_probe.py --peak-bw 4.8e12 --peak-bf16 9.894e14 [--bw-fraction 0.8]
                         [--compute-fraction 0.6] [--json OUT.json]
"""
import argparse
import datetime
import json
import statistics

import torch

# Llama-3.1-8B (hidden 4096, 32 heads of 128, 8 KV heads, MLP 14336, vocab 128256):
# (name, in_features K, out_features N) of the fused matrices a serving engine multiplies.
SHAPES = [
    ("qkv_proj", 4096, 4096 + 2 * 1024),
    ("o_proj", 4096, 4096),
    ("gate_up_proj", 4096, 2 * 14336),
    ("down_proj", 14336, 4096),
    ("lm_head", 4096, 128256),
]
ROWS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]


def time_op(fn, warmup=5, reps=30, per_timing=20):
    """Median and min seconds of one fn() call. Each timing covers `per_timing` calls issued
    back to back, so the GPU queue runs ahead of Python's dispatch (as a CUDA-graph engine
    does) and the launch cost on the host is not counted as GPU time."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_timing):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3 / per_timing)
    return statistics.median(times), min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peak-bw", type=float, required=True, help="datasheet bytes/s")
    ap.add_argument("--peak-bf16", type=float, required=True, help="datasheet dense bf16 FLOP/s")
    ap.add_argument("--bw-fraction", type=float, default=0.8)
    ap.add_argument("--compute-fraction", type=float, default=0.6)
    ap.add_argument("--json")
    a = ap.parse_args()

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    out = {
        "device": props.name,
        "num_sms": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "peak_memory_bandwidth_bytes_per_s": a.peak_bw,
        "peak_bf16_flops_per_s": a.peak_bf16,
        "roofline_bw_fraction": a.bw_fraction,
        "roofline_compute_fraction": a.compute_fraction,
        "method": "median of 30 CUDA-event timings of 20 back-to-back products each, after 5 "
                  "warm-ups; random bf16 data; "
                  "weights rotated over copies totalling >= 512 MiB so none is L2-resident",
    }

    n = 2 * 1024**3  # 4 GiB of bf16 per buffer
    x = torch.randn(n, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    med, best = time_op(lambda: y.copy_(x), per_timing=2)
    copy_bytes = 2 * x.numel() * x.element_size()  # read + write
    out["copy"] = {"bytes": copy_bytes, "median_s": med, "min_s": best,
                   "bytes_per_s": copy_bytes / med, "fraction_of_peak": copy_bytes / med / a.peak_bw}
    print(f"device-to-device copy: {copy_bytes / med / 1e12:.3f} TB/s "
          f"({copy_bytes / med / a.peak_bw:.3f} of peak)")
    del x, y
    torch.cuda.empty_cache()

    rows = []
    print(f"{'op':<13}{'rows':>6}{'median us':>11}{'TB/s':>7}{'bw frac':>8}{'TFLOP/s':>9}"
          f"{'fl frac':>8}{'roofline us':>12}{'error':>8}")
    for name, k, nn in SHAPES:
        # Several copies of the weights, used in turn, so that no run finds its weights in the
        # 60 MB L2 left over from the previous one (in a real step the next layer's weights are
        # different too).
        num_copies = max(2, -(-512 * 1024**2 // (2 * k * nn)))
        ws = [torch.randn(k, nn, device=dev, dtype=torch.bfloat16) for _ in range(num_copies)]
        turn = [0]

        def product(act, res):
            turn[0] = (turn[0] + 1) % num_copies
            torch.matmul(act, ws[turn[0]], out=res)

        for m in ROWS:
            act = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            res = torch.empty(m, nn, device=dev, dtype=torch.bfloat16)
            med, best = time_op(lambda: product(act, res))
            bytes_moved = 2 * (k * nn + m * k + m * nn)
            flops = 2 * m * k * nn
            predicted = max(bytes_moved / (a.peak_bw * a.bw_fraction),
                            flops / (a.peak_bf16 * a.compute_fraction))
            r = {"op": name, "rows": m, "in_features": k, "out_features": nn,
                 "median_s": med, "min_s": best, "bytes": bytes_moved, "flops": flops,
                 "bytes_per_s": bytes_moved / med, "flops_per_s": flops / med,
                 "bw_fraction": bytes_moved / med / a.peak_bw,
                 "flops_fraction": flops / med / a.peak_bf16,
                 "roofline_s": predicted, "roofline_error": predicted / med - 1}
            rows.append(r)
            print(f"{name:<13}{m:>6}{med * 1e6:>11.1f}{r['bytes_per_s'] / 1e12:>7.2f}"
                  f"{r['bw_fraction']:>8.3f}{r['flops_per_s'] / 1e12:>9.1f}"
                  f"{r['flops_fraction']:>8.3f}{predicted * 1e6:>12.1f}{r['roofline_error']:>+8.1%}")
            del act, res
        del ws
        torch.cuda.empty_cache()
    out["matmul"] = rows
    errors = sorted(abs(r["roofline_error"]) for r in rows)
    out["roofline_median_abs_error"] = statistics.median(errors)
    out["roofline_max_abs_error"] = errors[-1]
    # The fractions the data supports: streaming (rows <= 16) and compute-bound (rows >= 2048).
    out["streaming_bw_fraction_median"] = statistics.median(
        r["bw_fraction"] for r in rows if r["rows"] <= 16)
    out["compute_fraction_median"] = statistics.median(
        r["flops_fraction"] for r in rows if r["rows"] >= 2048)
    print(f"roofline |error|: median {out['roofline_median_abs_error']:.1%}, "
          f"max {out['roofline_max_abs_error']:.1%}")
    print(f"streaming bandwidth fraction (rows <= 16), median: "
          f"{out['streaming_bw_fraction_median']:.3f}")
    print(f"compute fraction (rows >= 2048), median: {out['compute_fraction_median']:.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
