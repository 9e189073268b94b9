#!/usr/bin/env python3
"""Regenerates the tables of docs/validation.md from `llmcap validate --published` (after) and
`llmcap validate --published --datasheet` (before): the summary per kind, metric and split, the
targets, and every row. The prose between them is kept; the tables are replaced in place.

Usage: scripts/validation_tables.py [--llmcap build/cli/llmcap] [--doc docs/validation.md]
"""
import argparse
import json
import os
import subprocess
import tempfile


def run(llmcap, datasheet):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "v.json")
        args = [llmcap, "validate", "--published", "--json", out] + (["--datasheet"] if datasheet else [])
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)


def pct(x):
    return f"{100 * x:.1f}%"


def figure(metric, v):
    return f"{v:.0f} tok/s" if metric == "throughput" else f"{1000 * v:.1f} ms"


def replace_table(lines, header_start, new_rows):
    """Replaces the table whose header line starts with `header_start` (header and separator
    kept) by `new_rows`."""
    i = next(k for k, l in enumerate(lines) if l.startswith(header_start))
    j = i + 2
    while j < len(lines) and lines[j].startswith("|"):
        j += 1
    return lines[:i + 2] + new_rows + lines[j:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llmcap", default="build/cli/llmcap")
    ap.add_argument("--doc", default="docs/validation.md")
    a = ap.parse_args()
    before, after = run(a.llmcap, True), run(a.llmcap, False)
    key = lambda s: (s["device_kind"], s["metric"], s["split"])
    b_sum = {key(s): s for s in before["summary"]}
    summary = []
    for s in after["summary"]:
        b = b_sum[key(s)]
        summary.append(f"| {s['device_kind']} | {s['metric']} | {s['split']} | {s['rows']} | "
                       f"{pct(b['median_abs_error'])} | {pct(s['median_abs_error'])} | "
                       f"{pct(s['p90_abs_error'])} | {100 * b['within_25_fraction']:.0f}% | "
                       f"{100 * s['within_25_fraction']:.0f}% | {b['worst_factor']:.2f} | "
                       f"{s['worst_factor']:.2f} |")
    targets = []
    for tb, ta in zip(before["targets"], after["targets"]):
        def text(t):
            met = "met" if t["met"] else "not met"
            if "cpu" in t["what"]:
                return f"worst {t['worst_factor']:.2f}x ({met})"
            return (f"{pct(t['median_abs_error'])}, {100 * t['within_25_fraction']:.0f}% "
                    f"({met})")
        goal = ta["goal"].replace("|", "\\|")
        targets.append(f"| {ta['what']}: {goal} | {text(tb)} | {text(ta)} |")
    b_rows = {r["id"]: r for r in before["rows"]}
    rows = []
    for r in after["rows"]:
        b = b_rows[r["id"]]
        err = lambda p: f"{100 * (p / r['published'] - 1):+.0f}%"
        rows.append(f"| {r['id']} | {r['split']} | {r['device_kind']} | {r['engine']} | "
                    f"{r['metric']} | {figure(r['metric'], r['published'])} | "
                    f"{figure(r['metric'], b['predicted'])} ({err(b['predicted'])}) | "
                    f"{figure(r['metric'], r['predicted'])} ({err(r['predicted'])}) |")
    with open(a.doc) as f:
        lines = f.read().split("\n")
    lines = replace_table(lines, "| kind | metric | split | rows |", summary)
    lines = replace_table(lines, "| target | before | after |", targets)
    lines = replace_table(lines, "| row | split | kind | engine |", rows)
    with open(a.doc, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
