#!/bin/sh
# Test sweep_collect_partial: `t3sim sweep --collect` on a cluster run where one job's result is
# missing. Plain --collect must fail naming the file; --allow-missing must summarise the rest and
# list the missing workload in summary.md.
#   sweep_collect_partial.sh T3SIM GNU_PARALLEL_WORK_DIR WORK_DIR
set -eu
T3SIM=$1
SOURCE=$2
WORK=$3
fail() { echo "sweep_collect_partial: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK/out/points"
cp "$SOURCE/suite.json" "$WORK/"
cp "$SOURCE/parallel/points/point-0000.json" "$WORK/out/points/"  # point-0001 never ran
cd "$WORK"
if "$T3SIM" sweep --suite suite.json --out out --collect > collect.log 2>&1; then
  fail "--collect succeeded with a result missing"
fi
grep -q "point-0001.json' is missing" collect.log || fail "--collect did not name the missing file"
"$T3SIM" sweep --suite suite.json --out out --collect --allow-missing > partial.log
grep -q "1 workloads have no results yet" partial.log || fail "no report of the missing workload"
/usr/bin/python3 - <<'PY'
import json
records = json.load(open("out/results.json"))
assert len(records) == 5, f"{len(records)} records, expected the 5 of the one present workload"
assert all(r["point"]["index"] == 0 for r in records), "records keep their suite index"
summary = open("out/summary.md").read()
assert "**Partial sweep**" in summary and "point-0001.json" in summary, "summary.md lists no gap"
PY
echo "sweep_collect_partial: ok"
