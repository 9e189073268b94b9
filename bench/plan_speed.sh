#!/usr/bin/env bash
# Speed of the default plan and of a GUI slider move (issue 30, item 9), as the user meets them:
#  - `llmcap plan` on the default scenario, analyses (and its configuration search) included,
#    stored in a fresh results database, wall time of the whole command; and with
#    --no-analysis;
#  - `llmcap-gui --bench-slider` on the default scenario (under xvfb-run when there is no
#    display; skipped when the GUI was not built): after a cold run at 1.0x, eight slider moves:
#    five to loads not visited before (1.1, 1.25, 1.5, 1.2, 0.8), then three back to loads visited
#    (1.0, the cold run's, 1.25 and 1.1: the window's shared simulations answer them), each
#    timed from the release to the first feasible row and to the last row.
# Rounds interleave the three (the machine's speed drifts); prints every figure, then medians.
# Usage: bench/plan_speed.sh [ROUNDS]   (default 3; LLMCAP_BUILD_DIR as scripts/test)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLMCAP_BUILD_DIR:-$root/build}"
rounds="${1:-3}"
scenario="$root/data/scenarios/chat-llama3.1-8b.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

seconds() {  # seconds CMD...: runs CMD, prints its wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.3f}')"
}

gui="$build/gui/llmcap-gui"
run_gui=()
if [ -x "$gui" ]; then
  if [ -n "${DISPLAY:-}" ]; then run_gui=("$gui"); else run_gui=(xvfb-run -a "$gui"); fi
fi

for round in $(seq 1 "$rounds"); do
  full=$(seconds "$build/cli/llmcap" plan "$scenario" --quiet --db "$work/runs-$round.sqlite")
  echo "$full" >>"$work/full.txt"
  lean=$(seconds "$build/cli/llmcap" plan "$scenario" --quiet --no-store --no-analysis)
  echo "$lean" >>"$work/lean.txt"
  echo "round $round: plan ${full} s, plan --no-analysis ${lean} s"
  if [ ${#run_gui[@]} -gt 0 ]; then
    "${run_gui[@]}" --scenario "$scenario" --no-store --bench-slider 1.1,1.25,1.5,1.2,0.8,1.0,1.25,1.1 \
      2>/dev/null | grep '^what-if' | tail -n +2 >"$work/moves.txt"
    head -n 5 "$work/moves.txt" | tee -a "$work/slider.txt" | sed 's/^/  /'
    tail -n +6 "$work/moves.txt" | tee -a "$work/revisit.txt" | sed 's/^/  revisited: /'
  fi
done

python3 - "$work" <<'PY'
import re, statistics, sys
work = sys.argv[1]
def floats(name):
    with open(f"{work}/{name}") as f:
        return [float(x) for x in f.read().split()]
print(f"median of {len(floats('full.txt'))} rounds:")
print(f"  default plan, analyses included: {statistics.median(floats('full.txt')):.2f} s")
print(f"  default plan, --no-analysis:     {statistics.median(floats('lean.txt')):.2f} s")
def moves(name, what):
    try:
        lines = open(f"{work}/{name}").read().splitlines()
    except FileNotFoundError:
        return False
    if not lines:
        return False
    feasible = [float(re.search(r"first feasible row ([0-9.]+) s", l).group(1)) for l in lines]
    last = [float(re.search(r"last row ([0-9.]+) s", l).group(1)) for l in lines]
    print(f"  {what} ({len(lines)} moves): first feasible row {statistics.median(feasible):.2f} s, "
          f"last row {statistics.median(last):.2f} s (max {max(last):.2f} s; "
          f"{sum(x < 1 for x in last)} of {len(last)} under 1 s)")
    return True
if moves("slider.txt", "slider move to a new load"):
    moves("revisit.txt", "slider move back to a load seen")
else:
    print("  slider: not measured (no llmcap-gui built)")
PY
