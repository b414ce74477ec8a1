#!/bin/sh
# Test sweep_symmetry: a sweep simulates one GPU per run under rotational symmetry by default
# (slicing too) and every GPU with --full (records, summary and emitted jobs say which);
# scripts/compare-sweeps finds the two within 0.5% in time and flags a run that is not.
#   sweep_symmetry.sh T3SIM COMPARE_SWEEPS WORK_DIR
set -eu
T3SIM=$1
COMPARE=$2
WORK=$3
PYTHON=/usr/bin/python3
fail() { echo "sweep_symmetry: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
cat > suite.json <<'JSON'
{"name": "tiny4", "models": ["mega-gpt-2"], "tp": [4], "sublayers": ["fc2"], "tokens": [2048],
 "scenarios": ["sequential", "t3", "slicing"]}
JSON
"$T3SIM" sweep --suite suite.json --out one --jobs 2 > one.log 2>&1 || fail "sweep failed"
"$T3SIM" sweep --suite suite.json --out full --jobs 2 --full > full.log 2>&1 ||
  fail "sweep --full failed"
grep -q "one GPU per run under rotational symmetry" one/summary.md || fail "summary: mode"
grep -q "on bank-level HBM an approximation" one/summary.md || fail "summary: bank caveat"
grep -q "every GPU of the group" full/summary.md || fail "summary --full: mode"
if grep -q "approximation" full/summary.md; then fail "summary --full: caveat"; fi
"$T3SIM" sweep --suite suite.json --out jobs --emit-jobs jobs.txt > /dev/null
grep -q -- "--set sim.symmetry=rotational" jobs.txt || fail "emitted jobs do not ask for symmetry"
"$T3SIM" sweep --suite suite.json --out jobs --emit-jobs jobs-full.txt --full > /dev/null
if grep -q "sim.symmetry" jobs-full.txt; then fail "--full jobs ask for symmetry"; fi

"$PYTHON" - <<'PY'
import json
one = json.load(open("one/results.json"))
full = json.load(open("full/results.json"))
assert {r["symmetry"] for r in one} == {"rotational"}, [r["symmetry"] for r in one]
assert {r["symmetry"] for r in full} == {"none"}, [r["symmetry"] for r in full]
# Group totals: the same link bytes whichever way it was simulated.
for a, b in zip(one, full):
    assert a["link_bytes"] == b["link_bytes"], (a["scenario"], a["link_bytes"], b["link_bytes"])
# A copy with one run 1% slower, for the comparison below.
one[0]["time_ns"] *= 1.01
json.dump(one, open("perturbed.json", "w"))
PY
"$PYTHON" "$COMPARE" full/results.json one/results.json > agree.md || fail "not within 0.5%"
grep -q "| mega-gpt-2 | 4 | fc2 | 2048 |" agree.md || fail "no row for the workload"
if "$PYTHON" "$COMPARE" full/results.json perturbed.json > perturbed.md; then
  fail "a run 1% off passed"
fi
grep -q "largest time difference" perturbed.md || fail "no summary line"
echo "sweep_symmetry: passed"
