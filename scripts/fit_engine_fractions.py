#!/usr/bin/env python3
"""Fits an engine profile's memory_bandwidth_fraction and compute_fraction to the fit rows of
data/validation/published.json for that engine (never the held_out rows): a grid search of the
pair that minimises the median |log(predicted / published)| over the rows, each prediction made
by `llmcap validate --published` with the candidate fractions written into a scratch copy of
the data folder. Prints the fit and the rows' errors; writes nothing into data/ unless --write.

Usage: scripts/fit_engine_fractions.py ENGINE [--llmcap build/cli/llmcap] [--data data]
                                         [--keep-bandwidth] [--write]
--keep-bandwidth: keep the profile's memory_bandwidth_fraction (a sourced figure) and fit only
the compute fraction (for an engine whose fit rows do not determine both).
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

BW_GRID = [round(0.30 + 0.05 * i, 2) for i in range(15)]  # 0.30 .. 1.00
COMPUTE_GRID = [round(0.005 * (1.25 ** i), 5) for i in range(26)]  # 0.005 .. ~1.3, capped at 1


def predict(llmcap, data, rows_file, json_out):
    subprocess.run([llmcap, "validate", "--published", "--published-file", rows_file, "--data-dir",
                    data, "--json", json_out], check=True, stdout=subprocess.DEVNULL)
    with open(json_out) as f:
        return json.load(f)["rows"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine")
    ap.add_argument("--llmcap", default="build/cli/llmcap")
    ap.add_argument("--data", default="data")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--keep-bandwidth", action="store_true")
    a = ap.parse_args()
    with open(os.path.join(a.data, "validation", "published.json")) as f:
        published = json.load(f)
    rows = [r for r in published["rows"] if r["engine"] == a.engine and r["split"] == "fit"]
    if not rows:
        sys.exit(f"no fit rows for engine {a.engine}")
    scratch = tempfile.mkdtemp(prefix="llmcap-fit-")
    try:
        data = os.path.join(scratch, "data")
        shutil.copytree(a.data, data)
        rows_file = os.path.join(scratch, "rows.json")
        with open(rows_file, "w") as f:
            json.dump({**published, "rows": rows}, f)
        engine_file = os.path.join(data, "engines", a.engine + ".json")
        with open(engine_file) as f:
            engine = json.load(f)
        best = None
        bw_grid = ([engine["memory_bandwidth_fraction"]["value"]] if a.keep_bandwidth else BW_GRID)
        for bw in bw_grid:
            for compute in COMPUTE_GRID:
                compute = min(compute, 1.0)
                engine["memory_bandwidth_fraction"]["value"] = bw
                engine["compute_fraction"]["value"] = compute
                with open(engine_file, "w") as f:
                    json.dump(engine, f)
                out = predict(a.llmcap, data, rows_file, os.path.join(scratch, "out.json"))
                errs = sorted(abs(math.log(r["predicted"] / r["published"])) for r in out)
                score = errs[(len(errs) - 1) // 2]
                key = (score, sum(errs))
                if best is None or key < best[0]:
                    best = (key, bw, compute, out)
        (score, total), bw, compute, out = best
        print(f"{a.engine}: {len(rows)} fit rows; memory_bandwidth_fraction {bw}, compute_fraction "
              f"{compute}; median |log error| {score:.3f}")
        for r in out:
            print(f"  {r['id']:60s} {r['metric']:5s} {r['published']:10.4g} {r['predicted']:10.4g} "
                  f"{100 * (r['predicted'] / r['published'] - 1):+7.1f}%")
        if a.write:
            path = os.path.join(a.data, "engines", a.engine + ".json")
            with open(path) as f:
                doc = json.load(f)
            source = (f"fitted on the {len(rows)} fit rows of data/validation/published.json for "
                      f"this engine by scripts/fit_engine_fractions.py (grid search of the median "
                      f"|log error|: {score:.3f})")
            if not a.keep_bandwidth:
                doc["memory_bandwidth_fraction"].update(value=bw, source=source)
            doc["compute_fraction"].update(value=compute, source=source)
            with open(path, "w") as f:
                f.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
