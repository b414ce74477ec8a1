#!/bin/sh
# Test sweep_resume: an in-process `t3sim sweep` keeps each workload's results in points/ as it
# finishes, and `--resume` runs only the workloads without results (in-process and with
# --emit-jobs), leaving the kept ones untouched and producing the same results.json.
#   sweep_resume.sh T3SIM GNU_PARALLEL_WORK_DIR WORK_DIR
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
T3SIM=$1
SOURCE=$2
WORK=$3
fail() { echo "sweep_resume: $*" >&2; exit 1; }

for n in 0 1; do
  [ -s "$SOURCE/inprocess/points/point-000$n.json" ] || fail "the in-process sweep kept no point-000$n.json"
done
[ -z "$(find "$SOURCE/inprocess/points" -name '*.partial')" ] || fail "a .partial file was left behind"
rm -rf "$WORK"
mkdir -p "$WORK/out/points"
cp "$SOURCE/suite.json" "$WORK/"
cp "$SOURCE/inprocess/points/point-0000.json" "$WORK/out/points/"  # point-0001 was interrupted
cd "$WORK"
cp out/points/point-0000.json kept.json

"$T3SIM" sweep --suite suite.json --out out --emit-jobs jobs.txt --resume
[ "$(wc -l < jobs.txt)" -eq 1 ] || fail "--emit-jobs --resume wrote $(wc -l < jobs.txt) commands, expected 1"
grep -q "point-0001.json" jobs.txt || fail "the emitted command is not point-0001's"

"$T3SIM" sweep --suite suite.json --out out --resume --jobs 2 > resume.log 2> resume.err
grep -q "1 of 2 workloads have results already; running 1" resume.err || fail "no resume report"
cmp -s kept.json out/points/point-0000.json || fail "--resume re-ran a workload that had results"
[ -s out/points/point-0001.json ] || fail "--resume did not write point-0001.json"
/usr/bin/python3 "$HERE/same_results.py" "$SOURCE/inprocess/results.json" out/results.json ||
  fail "a resumed sweep's results.json differs from an uninterrupted one's"

"$T3SIM" sweep --suite suite.json --out out --emit-jobs none.txt --resume
[ ! -s none.txt ] || fail "--emit-jobs --resume wrote commands although every workload has results"
if "$T3SIM" sweep --suite suite.json --out out --resume --collect > both.log 2>&1; then
  fail "--resume with --collect was accepted"
fi
grep -q "use one of them" both.log || fail "--resume --collect gave no clear error"
# A point file of another workload (a reused --out) is refused, naming the file.
cp out/points/point-0000.json keep0.json
/usr/bin/python3 - <<'PY'
import json
point = json.load(open("out/points/point-0000.json"))
for result in point:
    result["sublayer"] = "fc2"
json.dump(point, open("out/points/point-0000.json", "w"))
PY
if "$T3SIM" sweep --suite suite.json --out out --resume > other.log 2>&1; then
  fail "--resume kept another workload's results"
fi
grep -q "point-0000.json' holds results of another workload than mega-gpt-2 op TP 2" other.log ||
  fail "no clear error for another workload's results: $(cat other.log)"
echo "sweep_resume: ok"
