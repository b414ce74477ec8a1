#!/bin/sh
# Test sweep_determinism: one suite swept three ways (in-process with --jobs 1, with --jobs 2, and
# the cluster path: --emit-jobs, GNU parallel, --collect) must write byte-identical results.json.
#   sweep_determinism.sh T3SIM WORK_DIR
# results.json holds no wall time by design (results.csv does), so nothing is excluded here.
set -eu
T3SIM=$1
WORK=$2
fail() { echo "sweep_determinism: $*" >&2; exit 1; }

command -v parallel > /dev/null || fail "GNU parallel is not installed (Debian package parallel, scripts/install-deps)"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
# 2 workloads (TP 2 and 4) x 2 scenarios: 4 simulations, a few seconds.
cat > suite.json <<'JSON'
{"name": "determinism", "models": ["mega-gpt-2"], "tp": [2, 4], "sublayers": ["op"],
 "tokens": [1024], "scenarios": ["sequential", "t3-mca"]}
JSON

"$T3SIM" sweep --suite suite.json --out jobs1 --jobs 1 > /dev/null 2>&1 || fail "--jobs 1 failed"
"$T3SIM" sweep --suite suite.json --out jobs2 --jobs 2 > /dev/null 2>&1 || fail "--jobs 2 failed"
"$T3SIM" sweep --suite suite.json --out cluster --emit-jobs jobs.txt > /dev/null
parallel --halt now,fail=1 -j 2 < jobs.txt > /dev/null || fail "a job run by GNU parallel failed"
"$T3SIM" sweep --suite suite.json --out cluster --collect > /dev/null

[ "$(grep -c '"scenario"' jobs1/results.json)" -eq 4 ] || fail "jobs1/results.json does not hold 4 records"
for other in jobs2 cluster; do
  cmp jobs1/results.json "$other/results.json" ||
    fail "jobs1/results.json and $other/results.json differ: $(diff jobs1/results.json "$other/results.json" | head -5)"
done
echo "sweep_determinism: ok (results.json identical in-process --jobs 1, --jobs 2 and through GNU parallel)"
