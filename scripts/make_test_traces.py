#!/usr/bin/env python3
"""Writes the small synthetic traces the tests use, drawn from llmcap's own workload models
(data/workloads/*.json), so no test fixture is an excerpt of a public trace:

  tests/cli/data/conv_model300.csv  300 requests (arrived_at, num_prefill_tokens,
                                     num_decode_tokens): gamma arrivals at the Azure 2023
                                     conversation model's rate and gap CV, lengths from its
                                     quantiles
  tests/plan/data/lengths.csv       40 (num_prefill_tokens, num_decode_tokens) pairs from the
                                     ShareGPT model's quantiles

Deterministic (fixed seeds, Python's random module). Usage: scripts/make_test_traces.py
"""
import json
import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model(name):
    with open(os.path.join(ROOT, "data", "workloads", name + ".json")) as f:
        return json.load(f)


def quantile(points, p):
    """Linear interpolation in the (probability, tokens) quantiles; a whole token, >= 1."""
    for (p0, v0), (p1, v1) in zip(points, points[1:]):
        if p <= p1:
            t = 0.0 if p1 == p0 else (p - p0) / (p1 - p0)
            return max(1, int(round(v0 + t * (v1 - v0))))
    return max(1, int(round(points[-1][1])))


def lengths(m, rng):
    prompt = quantile(m["prompt_tokens"]["quantiles"], rng.random())
    output = quantile(m["output_tokens"]["quantiles"], rng.random())
    return prompt, max(2, output)


def write(path, header, rows):
    with open(os.path.join(ROOT, path), "w") as f:
        f.write(header + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")


def main():
    conv = model("azure-2023-conversation")
    rng = random.Random(20231116)
    rate = conv["arrivals"]["rate_per_s"]
    cv = conv["arrivals"]["interarrival_cv"]
    shape = 1.0 / (cv * cv)  # gamma gaps: mean 1 / rate, CV cv
    t = 0.0
    rows = []
    for i in range(300):
        if i > 0:
            t += rng.gammavariate(shape, 1.0 / (shape * rate))
        p, o = lengths(conv, rng)
        rows.append((round(t, 6), p, o))
    write("tests/cli/data/conv_model300.csv", "arrived_at,num_prefill_tokens,num_decode_tokens",
          rows)

    share = model("sharegpt-8k")
    rng = random.Random(8000)
    write("tests/plan/data/lengths.csv", "num_prefill_tokens,num_decode_tokens",
          [lengths(share, rng) for _ in range(40)])


if __name__ == "__main__":
    main()
