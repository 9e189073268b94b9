#!/usr/bin/env python3
"""Fits an engine profile's fractions to the fit rows of data/validation/published.json for that
engine (never the held_out rows), in two stages, each a grid search of the value(s) that
minimise the median |log(predicted / published)| over its rows, each prediction made by
`llmcap validate --published` with the candidate values written into a scratch copy of the data
folder:
  1. compute_fraction (large, prefill-sized products) on the engine's TTFT rows (with
     --frontend, jointly with frontend_latency_s, the time each request spends in the serving
     front end before the scheduler sees it);
  2. memory_bandwidth_fraction and decode_compute_fraction (the products of decode-only steps)
     on its TPOT rows.
A stage without rows keeps the profile's values. Prints the fit and the rows' errors; writes
nothing into data/ unless --write.

Usage: scripts/fit_engine_fractions.py ENGINE [--llmcap build/cli/llmcap] [--data data]
                                         [--keep-bandwidth] [--keep-compute] [--frontend]
                                         [--write]
--keep-bandwidth: keep the profile's memory_bandwidth_fraction (a sourced figure).
--keep-compute: keep the profile's compute_fraction (a sourced figure).
--frontend: also fit frontend_latency_s on the TTFT rows.
--ttft-only: fit on the TTFT rows only (stage 1), keeping the decode figures.
--with-throughput: stage 2 fits on the TPOT and the max-throughput rows.
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
FRONTEND_GRID = [round(0.0005 * i, 4) for i in range(41)]  # 0 .. 20 ms


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
    ap.add_argument("--keep-compute", action="store_true")
    ap.add_argument("--frontend", action="store_true")
    ap.add_argument("--ttft-only", action="store_true")
    ap.add_argument("--with-throughput", action="store_true")
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
        engine_file = os.path.join(data, "engines", a.engine + ".json")
        with open(engine_file) as f:
            engine = json.load(f)

        def score(subset, values):
            for key, value in values.items():
                engine.setdefault(key, {"value": 0, "source": "fit in progress", "as_of": "2026-12-02"})["value"] = value
            with open(engine_file, "w") as f:
                json.dump(engine, f)
            rows_file = os.path.join(scratch, "rows.json")
            with open(rows_file, "w") as f:
                json.dump({**published, "rows": subset}, f)
            out = predict(a.llmcap, data, rows_file, os.path.join(scratch, "out.json"))
            errs = sorted(abs(math.log(r["predicted"] / r["published"])) for r in out)
            return (errs[(len(errs) - 1) // 2], sum(errs)), out

        fitted = {}
        ttft = [r for r in rows if r["metric"] == "ttft"]
        if ttft and not (a.keep_compute and not a.frontend):
            compute_grid = ([engine["compute_fraction"]["value"]] if a.keep_compute
                            else [min(c, 1.0) for c in COMPUTE_GRID])
            frontend_grid = FRONTEND_GRID if a.frontend else [None]
            best = min((score(ttft, {"compute_fraction": c,
                                     **({"frontend_latency_s": f} if f is not None else {})})
                        + ((c, f),) for c in compute_grid for f in frontend_grid),
                       key=lambda x: x[0])
            c, f = best[2]
            if not a.keep_compute:
                fitted["compute_fraction"] = (c, len(ttft), best[0][0])
            engine["compute_fraction"]["value"] = c
            if f is not None:
                fitted["frontend_latency_s"] = (f, len(ttft), best[0][0])
                engine["frontend_latency_s"]["value"] = f
        decode_metrics = ("tpot", "throughput") if a.with_throughput else ("tpot",)
        tpot = [r for r in rows if r["metric"] in decode_metrics]
        if tpot and not a.ttft_only:
            bw_grid = ([engine["memory_bandwidth_fraction"]["value"]] if a.keep_bandwidth
                       else BW_GRID)
            best = min((score(tpot, {"memory_bandwidth_fraction": bw,
                                     "decode_compute_fraction": min(c, 1.0)}) + ((bw, min(c, 1.0)),)
                        for bw in bw_grid for c in COMPUTE_GRID), key=lambda x: x[0])
            bw, dc = best[2]
            if not a.keep_bandwidth:
                fitted["memory_bandwidth_fraction"] = (bw, len(tpot), best[0][0])
            fitted["decode_compute_fraction"] = (dc, len(tpot), best[0][0])
            engine["memory_bandwidth_fraction"]["value"] = bw
            engine["decode_compute_fraction"]["value"] = dc
        _, out = score(rows, {})
        print(f"{a.engine}: {len(rows)} fit rows; " +
              ", ".join(f"{k} {v[0]:g} ({v[1]} rows, median |log error| {v[2]:.3f})"
                        for k, v in fitted.items()))
        for r in out:
            print(f"  {r['id']:60s} {r['metric']:5s} {r['published']:10.4g} {r['predicted']:10.4g} "
                  f"{100 * (r['predicted'] / r['published'] - 1):+7.1f}%")
        if a.write:
            path = os.path.join(a.data, "engines", a.engine + ".json")
            with open(path) as f:
                doc = json.load(f)
            for key, (value, n, err) in fitted.items():
                metric = ("TTFT" if key in ("compute_fraction", "frontend_latency_s")
                          else "TPOT and throughput" if a.with_throughput else "TPOT")
                doc[key] = {"value": value,
                            "source": f"fitted on the {n} fit {metric} rows of "
                                      f"data/validation/published.json for this engine by "
                                      f"scripts/fit_engine_fractions.py (grid search of the "
                                      f"median |log error|: {err:.3f})",
                            "as_of": "2026-12-02"}
            order = ["id", "name", "version", "device_kind", "note", "scheduler", "step_overhead_s",
                     "kernel_overhead_s", "memory_bandwidth_fraction", "compute_fraction",
                     "decode_compute_fraction", "usable_memory_fraction", "frontend_latency_s",
                     "cpu_path"]
            doc = {k: doc[k] for k in order if k in doc}
            with open(path, "w") as f:
                f.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
