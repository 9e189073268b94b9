#!/usr/bin/env bash
# Proves that a change left llmcap's behaviour as it was: builds BASE_REF (default: HEAD~1) in
# its own worktree, runs the same inputs through both builds and compares the outputs byte for
# byte:
#   - `plan --json --csv` (and the printed table) of every shipped scenario (data/scenarios);
#   - every report format (pdf html md csv json xlsx) of one stored run, both builds reading
#     the same results database;
#   - the golden scenario's full request records (tests/sim/golden_test.cpp,
#     LLMCAP_GOLDEN_RECORDS_DIR), every batching policy x router;
#   - the message and exit code of a catalogue of bad inputs (below), one per error path of
#     the front end;
#   - and that every message fragment the tests at BASE_REF assert (HasSubstr, StartsWith,
#     EndsWith, StrEq) is still asserted by the tests of the working tree, so the tested
#     messages that the suite checks are the same ones.
# Both builds read this working tree's data/ (--data-dir), so only the code differs.
#
# Usage: tests/behaviour_unchanged.sh [BASE_REF] [--quick] [--keep]
#   --quick: only the scenarios that plan in seconds (chat, code, mixed-fleet, disaggregated).
#   --keep: keep the outputs (the folder is printed) instead of removing them.
# Environment: LLMCAP_BUILD_DIR (the working tree's build, default build/), LLMCAP_BASE_DIR
# (where BASE_REF is checked out and built, default build-base/; reused when it holds the same
# commit). Exit 0 when everything matches, 1 with the differences otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

base_ref="HEAD~1"
quick=0
keep=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --keep) keep=1 ;;
    -h | --help)
      sed -n '2,23p' "$0"
      exit 0
      ;;
    *) base_ref="$arg" ;;
  esac
done
base_sha="$(git rev-parse --verify "$base_ref^{commit}")"
new_build="${LLMCAP_BUILD_DIR:-$root/build}"
base_dir="${LLMCAP_BASE_DIR:-$root/build-base}"
targets=(llmcap sim_tests)

say() { printf 'behaviour_unchanged: %s\n' "$*" >&2; }

# ---- the two builds -------------------------------------------------------------------------
say "building the working tree ($new_build)"
cmake -S "$root" -B "$new_build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$new_build" -j"$(nproc)" --target "${targets[@]}" >/dev/null

if [ "$(git -C "$base_dir/src" rev-parse HEAD 2>/dev/null || true)" != "$base_sha" ]; then
  say "checking out $base_ref ($base_sha) in $base_dir/src"
  rm -rf "$base_dir/src"
  git worktree prune
  mkdir -p "$base_dir"
  git worktree add --detach --force "$base_dir/src" "$base_sha" >/dev/null
fi
say "building $base_ref in $base_dir/build"
cmake -S "$base_dir/src" -B "$base_dir/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$base_dir/build" -j"$(nproc)" --target "${targets[@]}" >/dev/null

work="$(mktemp -d)"
if [ "$keep" = 1 ]; then
  say "outputs kept in $work"
else
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/base" "$work/new" "$work/inputs"
# Runs that store (plan without --db) go to a database of this run, never the user's.
export LLMCAP_DB="$work/default.sqlite"

# ---- bad inputs: one per error path the front end reports ------------------------------------
model="$root/data/models/llama-3.1-8b.json"
trace="$root/tests/cli/data/conv_model300.csv"
in="$work/inputs"
trace_workload="{\"kind\": \"trace\", \"path\": \"$trace\"}"
scenario() {  # scenario NAME EXTRA_JSON [MODEL] [WORKLOAD_JSON]
  local workload="${4:-$trace_workload}"
  printf '{"name": "bad", "model": "%s", "workload": %s, "slo": {"ttft_p99_s": 2, "tpot_p99_s": 0.05}, "candidates": ["aws-g6e.xlarge"]%s}\n' \
    "${3:-$model}" "$workload" "$2" >"$in/$1.json"
}
printf '{"name": ' >"$in/malformed.json"
scenario mistyped-slo '' "$model"
sed -i 's/"ttft_p99_s": 2/"ttft_p99_s": "fast"/' "$in/mistyped-slo.json"
scenario negative-rate '' "$model" \
  "{\"kind\": \"poisson\", \"lengths_path\": \"$trace\", \"rate_per_s\": -3, \"num_requests\": 10}"
scenario unknown-instance ', "candidates": ["aws-x1.huge"]'
sed -i 's/, "candidates": \["aws-g6e.xlarge"\]//' "$in/unknown-instance.json"
scenario missing-model '' /nonexistent/model.json
printf '{"model_type": "mamba", "hidden_size": 4096}\n' >"$in/mamba.json"
scenario unknown-model-type '' "$in/mamba.json"
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,100,10\n0.5,abc,10\n' >"$in/t-cell.csv"
scenario trace-cell '' "$model" "{\"kind\": \"trace\", \"path\": \"$in/t-cell.csv\"}"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374\n' >"$in/t-col.csv"
scenario trace-column '' "$model" "{\"kind\": \"trace\", \"path\": \"$in/t-col.csv\"}"
scenario unknown-router ', "serving": {"router": "random"}'
scenario unknown-batching ', "serving": {"batching": "eager"}'
scenario zero-seqs ', "serving": {"max_num_seqs": 0}'
scenario chunk-below-seqs \
  ', "serving": {"batching": "chunked_prefill", "max_num_seqs": 64, "max_num_batched_tokens": 32}'
scenario bad-block ', "serving": {"block_size_tokens": -16}'
scenario bad-weight-format ', "weight_format": "fp3"'
scenario missing-slo ''
sed -i 's/"slo": {[^}]*}, //' "$in/missing-slo.json"
scenario bad-tco ', "tco": {"price_model": "barter"}'
scenario bad-fleet ', "fleet": {"prefill": [{"instance": "aws-g6e.xlarge", "count": 0}], "decode": [{"instance": "aws-g6e.xlarge", "count": 1}]}'
sed -i 's/, "candidates": \["aws-g6e.xlarge"\]//' "$in/bad-fleet.json"
scenario bad-classes '' "$model" \
  "{\"kind\": \"classes\", \"classes\": [{\"name\": \"a\", \"kind\": \"poisson\", \"lengths_path\": \"$trace\", \"rate_per_s\": 1, \"num_requests\": 10, \"slo\": {\"ttft_p99_s\": -1, \"tpot_p99_s\": 0.05}}]}"
sed -i 's/"slo": {"ttft_p99_s": 2, "tpot_p99_s": 0.05}, //' "$in/bad-classes.json"
printf '[1, 2]\n' >"$in/not-an-object.json"
printf '{"claims": [{"id": "x"}]}\n' >"$in/claims.json"
printf '{"name": "s", "base": "/nonexistent/base.json", "axes": []}\n' >"$in/sweep.json"

run_errors() {  # run_errors BINARY OUT_FILE
  local bin="$1" out="$2" db="$work/errors.sqlite"
  rm -f "$db"
  local -a cases=(
    "plan /nonexistent/s.json"
    "plan $in/malformed.json"
    "plan $in/not-an-object.json"
    "plan $in/mistyped-slo.json"
    "plan $in/negative-rate.json"
    "plan $in/unknown-instance.json"
    "plan $in/missing-model.json"
    "plan $in/unknown-model-type.json"
    "plan $in/trace-cell.json"
    "plan $in/trace-column.json"
    "plan $in/unknown-router.json"
    "plan $in/unknown-batching.json"
    "plan $in/zero-seqs.json"
    "plan $in/chunk-below-seqs.json"
    "plan $in/bad-block.json"
    "plan $in/bad-weight-format.json"
    "plan $in/missing-slo.json"
    "plan $in/bad-tco.json"
    "plan $in/bad-fleet.json"
    "plan $in/bad-classes.json"
    "plan $root/tests/cli/data/small.json --frobnicate"
    "plan $root/tests/cli/data/small.json --data-dir /nonexistent/data"
    "plan $root/tests/cli/data/small.json --json /nonexistent/dir/out.json"
    "plan $root/tests/cli/data/small.json --profile /nonexistent/profile.json"
    "plan $root/tests/cli/data/small.json --profile $in/malformed.json"
    "audit /nonexistent/claims.json"
    "audit $in/claims.json"
    "report 999 --db $db --out $work/r.pdf"
    "report latest --db $db --out $work/r.docx"
    "report --document /nonexistent/run.json --out $work/r.md"
    "runs show 999 --db $db"
    "runs compare 1 2 --db $db"
    "sweep /nonexistent/sweep.json --db $db"
    "sweep $in/sweep.json --db $db"
    "bench-sim --requests -5"
    "validate --profile /nonexistent/profile.json"
    "serve-bench --model /nonexistent/model.json"
  )
  : >"$out"
  for c in "${cases[@]}"; do
    local rc=0 err
    # shellcheck disable=SC2086  # the case is a word list on purpose
    err="$("$bin" $c --quiet 2>&1 >/dev/null)" || rc=$?
    if [[ "$err" == *"--quiet"* ]]; then  # a command without --quiet: ask again without it
      rc=0
      # shellcheck disable=SC2086
      err="$("$bin" $c 2>&1 >/dev/null)" || rc=$?
    fi
    printf '$ llmcap %s\nexit %d\n%s\n\n' "${c//$work/WORK}" "$rc" "${err//$work/WORK}" >>"$out"
  done
}

# ---- one build's outputs ---------------------------------------------------------------------
scenarios=("$root"/data/scenarios/*.json)
if [ "$quick" = 1 ]; then
  scenarios=("$root"/data/scenarios/{chat,code,mixed-fleet,disaggregated}-*.json)
fi

run_build() {  # run_build NAME BUILD_DIR
  local name="$1" build="$2" out="$work/$1"
  local bin="$build/cli/llmcap"
  for s in "${scenarios[@]}"; do
    local stem
    stem="$(basename "$s" .json)"
    say "$name: plan $stem"
    "$bin" plan "$s" --data-dir "$root/data" --no-store --quiet --threads 2 \
      --json "$out/plan-$stem.json" --csv "$out/plan-$stem.csv" >"$out/plan-$stem.txt"
  done
  say "$name: reports of one stored run"
  for ext in pdf html md csv json xlsx; do
    "$bin" report latest --db "$work/runs.sqlite" --out "$out/report.$ext" >/dev/null 2>&1
  done
  say "$name: golden records"
  mkdir -p "$out/golden"
  LLMCAP_GOLDEN_RECORDS_DIR="$out/golden" "$build/tests/sim/sim_tests" \
    --gtest_filter='GoldenScenarioTest.*' >/dev/null
  say "$name: bad inputs"
  run_errors "$bin" "$out/errors.txt"
}

say "storing one run for the reports"
"$base_dir/build/cli/llmcap" plan "$root/tests/cli/data/small.json" --data-dir "$root/data" \
  --db "$work/runs.sqlite" --quiet >/dev/null
run_build base "$base_dir/build"
run_build new "$new_build"

# A PDF and an XLSX carry their creation time, and Qt's PDF writer orders its embedded font
# objects differently from one process to the next (two runs of one binary differ): compare
# an XLSX by its unpacked parts (docProps/core.xml without its dates) and a PDF by its text
# (pdftotext -layout) and its pages rendered at 50 dpi (pdftoppm).
normalise() {
  local dir="$1"
  if [ -f "$dir/report.xlsx" ]; then
    mkdir -p "$dir/report.xlsx.d"
    (cd "$dir/report.xlsx.d" && python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(".")' "$dir/report.xlsx")
    sed -i -E 's#<dcterms:(created|modified)[^<]*</dcterms:(created|modified)>##g' \
      "$dir/report.xlsx.d/docProps/core.xml" 2>/dev/null || true
    rm "$dir/report.xlsx"
  fi
  if [ -f "$dir/report.pdf" ]; then
    pdftotext -layout "$dir/report.pdf" "$dir/report.pdf.txt"
    mkdir -p "$dir/report.pdf.pages"
    pdftoppm -r 50 -png "$dir/report.pdf" "$dir/report.pdf.pages/page"
    rm "$dir/report.pdf"
  fi
}
normalise "$work/base"
normalise "$work/new"

status=0
if ! diff -r "$work/base" "$work/new" >"$work/diff.txt"; then
  say "outputs differ between $base_ref and the working tree:"
  head -n 80 "$work/diff.txt" >&2
  status=1
fi

# ---- tested messages -------------------------------------------------------------------------
literals() {  # the string literals inside message matchers of the test sources on stdin
  python3 -c '
import re, sys
text = sys.stdin.read()
for m in re.finditer(r"(?:HasSubstr|StartsWith|EndsWith|StrEq)\(\s*((?:\"(?:[^\"\\\\]|\\\\.)*\"\s*)+)\)", text):
    print(m.group(1).strip())
' | sort -u
}
git ls-tree -r --name-only "$base_sha" -- tests | grep -E '\.(cpp|h)$' |
  while read -r f; do git show "$base_sha:$f"; done | literals >"$work/literals-base.txt"
git ls-files -- tests | grep -E '\.(cpp|h)$' | xargs cat | literals >"$work/literals-new.txt"
missing="$(comm -23 "$work/literals-base.txt" "$work/literals-new.txt")"
if [ -n "$missing" ]; then
  say "message assertions of $base_ref that the tests no longer make:"
  printf '%s\n' "$missing" >&2
  status=1
fi

n_files=$(find "$work/new" -type f | wc -l)
n_literals=$(wc -l <"$work/literals-base.txt")
if [ "$status" = 0 ]; then
  say "unchanged: $n_files outputs identical to $base_ref ($base_sha), $n_literals tested message fragments still asserted"
fi
exit "$status"
