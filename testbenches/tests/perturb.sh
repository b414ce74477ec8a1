#!/bin/sh
# Test perturb: scripts/perturb runs `t3sim compare` as given and with one latency moved per run,
# reports each run's times (those of its result document) and ratios, and their mean; bad
# arguments and a failing run are errors that name what is wrong.
#   perturb.sh SCRIPT T3SIM WORK_DIR
set -eu
SCRIPT=$1
T3SIM=$2
WORK=$3
PYTHON=/usr/bin/python3
fail() { echo "perturb: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK/out"
cd "$WORK"
ARGS="--model mega-gpt-2 --sublayer op --tp 2 --tokens 512 --scenarios t3,t3-mca"
"$PYTHON" "$SCRIPT" --t3sim "$T3SIM" --out out --runs 3 -- $ARGS --set link.latency_ns=600 \
  > table.md
"$PYTHON" - <<'PY'
import json
lines = open("table.md").read().splitlines()
rows = [line.split("|")[1:-1] for line in lines[2:]]
assert [r[1].strip() for r in rows[:3]] == ["as given", "link.latency_ns=599",
                                            "link.latency_ns=601"], rows
times = []
for k, row in enumerate(rows[:3]):
    records = {r["scenario"]: r for r in json.load(open(f"out/run-{k}.json"))}
    # The perturbation is applied on top of the arguments' own --set.
    assert records["t3"]["config"]["link"]["latency_ns"] == [600, 599, 601][k], k
    t3, mca = records["t3"]["time_ns"] / 1e3, records["t3-mca"]["time_ns"] / 1e3
    assert row[2].strip() == f"{t3:.1f}" and row[3].strip() == f"{mca:.1f}", row
    assert row[4].strip() == f"{mca / t3:.4f}", row
    times.append(t3)
mean = next(r for r in rows if r[0].strip() == "mean")
assert mean[2].strip() == f"{sum(times) / 3:.1f}", mean
assert len(set(times)) > 1, "the perturbations moved nothing"
PY

expect_error() {  # expect_error MESSAGE ARGS...: exit 1 with MESSAGE on stderr
  message=$1
  shift
  if "$PYTHON" "$SCRIPT" --t3sim "$T3SIM" "$@" > /dev/null 2> err.txt; then
    fail "accepted: $*"
  fi
  grep -q -- "$message" err.txt || fail "no '$message' for: $* ($(cat err.txt))"
}
expect_error "must name two or more --scenarios" --out out -- --model mega-gpt-2
expect_error "runs 0: must be 1 to 16" --out out --runs 0 -- $ARGS
expect_error "must not name --json" --out out -- $ARGS --json x.json
expect_error "must not name --json" --out out -- $ARGS --json=x.json
expect_error "not a directory" --out missing -- $ARGS
expect_error "run 0 (as given) failed (exit 2): .*'nope': not a model" --out out --runs 1 -- \
  --model nope --scenarios t3,t3-mca
echo "perturb: ok"
