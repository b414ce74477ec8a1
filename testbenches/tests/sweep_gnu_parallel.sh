#!/bin/sh
# Test sweep_gnu_parallel: the cluster path of `t3sim sweep` (docs/sweeps.md) on a tiny suite.
#   sweep_gnu_parallel.sh T3SIM WORK_DIR
# Writes the suite, emits one job per workload, runs the jobs with GNU parallel, collects, and
# checks results.json (points x 5 records), results.csv (header + that many rows) and summary.md
# (a geomean row); then runs the same suite in-process and checks that its results.json equals the
# collected one apart from wall_time_s. Leaves WORK_DIR/parallel/results.json for plot_sweep.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
T3SIM=$1
WORK=$2
PYTHON=/usr/bin/python3
fail() { echo "sweep_gnu_parallel: $*" >&2; exit 1; }

command -v parallel > /dev/null || fail "GNU parallel is not installed (Debian package parallel, scripts/install-deps)"
command -v "$PYTHON" > /dev/null || fail "$PYTHON is missing (scripts/install-deps)"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
# 1 model x 1 TP x 1 sublayer x 1 token count x 2 link bandwidths = 2 workloads, 5 scenarios each.
cat > suite.json <<'JSON'
{"name": "tiny", "models": ["mega-gpt-2"], "tp": [2], "sublayers": ["op"], "tokens": [512],
 "set": {"link.bandwidth_GBps": [75, 150]}}
JSON
POINTS=2
RECORDS=$((POINTS * 5))

"$T3SIM" sweep --suite suite.json --out parallel --emit-jobs jobs.txt
[ "$(wc -l < jobs.txt)" -eq "$POINTS" ] || fail "jobs.txt has $(wc -l < jobs.txt) lines, expected $POINTS"
parallel --halt now,fail=1 -j 2 < jobs.txt || fail "a job run by GNU parallel failed"
for n in $(seq 0 $((POINTS - 1))); do
  [ -s "parallel/points/point-000$n.json" ] || fail "parallel/points/point-000$n.json was not written"
done
"$T3SIM" sweep --suite suite.json --out parallel --collect

"$PYTHON" - parallel "$RECORDS" <<'PY'
import json, sys
out, expected = sys.argv[1], int(sys.argv[2])
records = json.load(open(f"{out}/results.json"))
assert isinstance(records, list), "results.json is not an array"
assert len(records) == expected, f"results.json has {len(records)} records, expected {expected}"
scenarios = sorted({r["scenario"] for r in records})
assert scenarios == ["ideal", "ideal-rs-nmc", "sequential", "t3", "t3-mca"], scenarios
assert sorted({tuple(r["point"]["sets"]) for r in records}) == [
    ("link.bandwidth_GBps=150",), ("link.bandwidth_GBps=75",)], "point sets"
for r in records:
    assert r["time_ns"] > 0 and r["speedup_vs_sequential"] > 0, r["scenario"]
lines = open(f"{out}/results.csv").read().splitlines()
assert lines[0].startswith("model,sublayer,tp,tokens,sets,scenario,"), lines[0]
assert len(lines) == expected + 1, f"results.csv has {len(lines)} lines, expected {expected + 1}"
summary = open(f"{out}/summary.md").read()
assert "| **geomean** |" in summary, "summary.md has no geomean row"
PY

"$T3SIM" sweep --suite suite.json --out inprocess --jobs 2
"$PYTHON" "$HERE/same_results.py" parallel/results.json inprocess/results.json ||
  fail "--collect and the in-process sweep disagree"
echo "sweep_gnu_parallel: ok ($RECORDS records)"
