#!/usr/bin/env bash
# Simulator speed of two llmcap binaries side by side: `bench-sim` of each, interleaved
# (A B A B ... with the order swapped every round, so drift in the machine's speed falls on
# both), then the median wall time of the simulate() call per binary and the ratio new / old.
# Usage: bench/compare_bench_sim.sh OLD_LLMCAP NEW_LLMCAP [ROUNDS] [REQUESTS]
#   OLD_DATA_DIR=DIR: the old binary's data folder (an older tree's data/, when its reader
#   refuses the newer catalog); default: this tree's data/.
#   defaults: 7 rounds of 1,000,000 requests on 64 replicas (bench-sim's scenario).
# Prints one line per run and a summary; the machine is shared and noisy, so only the medians
# measured here, side by side, are comparable.
set -euo pipefail
old="$1"
new="$2"
rounds="${3:-7}"
requests="${4:-1000000}"
data_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/data"
work="$(mktemp -d)"
old_data_dir="${OLD_DATA_DIR:-$data_dir}"
trap 'rm -rf "$work"' EXIT

run() {  # run NAME BINARY ROUND
  local dir="$data_dir"
  if [ "$1" = old ]; then dir="$old_data_dir"; fi
  "$2" bench-sim --requests "$requests" --instances 64 --no-store --data-dir "$dir" \
    --json "$work/$1-$3.json" >/dev/null
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["wall_s"])' \
    "$work/$1-$3.json" >>"$work/$1.txt"
  printf '%s round %s: %s s\n' "$1" "$3" "$(tail -n 1 "$work/$1.txt")"
}

for ((i = 1; i <= rounds; i++)); do
  if ((i % 2)); then
    run old "$old" "$i"
    run new "$new" "$i"
  else
    run new "$new" "$i"
    run old "$old" "$i"
  fi
done
python3 - "$work/old.txt" "$work/new.txt" <<'PY'
import statistics, sys
old = [float(x) for x in open(sys.argv[1])]
new = [float(x) for x in open(sys.argv[2])]
mo, mn = statistics.median(old), statistics.median(new)
print(f"median wall_s: old {mo:.3f}, new {mn:.3f}; new/old {mn / mo:.3f} "
      f"(old {min(old):.3f}-{max(old):.3f}, new {min(new):.3f}-{max(new):.3f}, {len(old)} runs each)")
PY
