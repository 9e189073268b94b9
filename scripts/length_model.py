#!/usr/bin/env python3
"""Prints the figures of a length model (docs/scenarios.md, "Length models") computed from a
trace: the quantiles of its prompt and output lengths at 0, 0.01, ..., 0.99, 0.991, ..., 0.999
and 1 (linear interpolation
between order statistics, as numpy's default), its request count, span, mean arrival rate and
the coefficient of variation of its inter-arrival gaps. data/workloads/*.json hold the figures
of the public Azure 2023 traces, computed with this script from ../shared/data/traces/; the
traces themselves are not part of the repository.

Usage: scripts/length_model.py TRACE.csv   (Azure 2023 `TIMESTAMP,ContextTokens,GeneratedTokens`,
       Vidur `arrived_at,num_prefill_tokens,num_decode_tokens`, or a length file
       `num_prefill_tokens,num_decode_tokens,...` without arrivals)
"""
import csv
import json
import statistics
import sys
from datetime import datetime


# The probabilities: every percentile, and every per-mille point of the top percent, where the
# lengths of chat traces spread most (the longest conversation prompt is 3.4 times its 99th
# percentile).
PROBABILITIES = [i / 100 for i in range(100)] + [0.99 + i / 1000 for i in range(1, 10)] + [1.0]


def quantiles(values):
    s = sorted(values)
    out = []
    for p in PROBABILITIES:
        pos = (len(s) - 1) * p
        lo = int(pos)
        hi = min(lo + 1, len(s) - 1)
        out.append([round(p, 3), round(s[lo] + (s[hi] - s[lo]) * (pos - lo), 2)])
    return out


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], [r for r in rows[1:] if r]
    if header[0] == "TIMESTAMP":
        stamps = [datetime.strptime(r[0][:26], "%Y-%m-%d %H:%M:%S.%f").timestamp() for r in rows]
        arrivals = [t - stamps[0] for t in stamps]
    elif header[0] == "arrived_at":
        arrivals = [float(r[0]) for r in rows]
    elif header[0] == "num_prefill_tokens":  # a length file: no arrivals
        arrivals = None
        rows = [["", r[0], r[1]] for r in rows]
    else:
        sys.exit(f"{path}: unknown header {header!r}")
    prompt = [int(r[1]) for r in rows]
    output = [int(r[2]) for r in rows]
    figures = {"num_requests": len(rows)}
    if arrivals:
        arrivals.sort()
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        span = arrivals[-1] - arrivals[0]
        figures["span_s"] = round(span, 1)
        figures["rate_per_s"] = round((len(rows) - 1) / span, 4)
        figures["interarrival_cv"] = round(statistics.pstdev(gaps) / statistics.mean(gaps), 3)
    print(json.dumps({
        **figures,
        "prompt_tokens": {"mean": round(statistics.mean(prompt), 1),
                          "quantiles": quantiles(prompt)},
        "output_tokens": {"mean": round(statistics.mean(output), 1),
                          "quantiles": quantiles(output)},
    }, indent=2))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
