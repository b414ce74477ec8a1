#!/bin/sh
# Test plot_sweep: scripts/plot draws speedup.png and dram.png from the results.json left by
# sweep_gnu_parallel, and timeline.png from two traces of the same tiny workload (sequential and
# t3-mca); a missing file and a results file without a needed field fail naming them.
#   sweep_plot.sh T3SIM PLOT RESULTS_JSON WORK_DIR
set -eu
T3SIM=$1
PLOT=$2
RESULTS=$3
WORK=$4
fail() { echo "plot_sweep: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
for scenario in sequential t3-mca; do
  "$T3SIM" run --model mega-gpt-2 --sublayer op --tp 2 --tokens 512 --scenario $scenario \
    --trace "$WORK/$scenario.trace.json" > /dev/null
done
"$PLOT" "$RESULTS" --out "$WORK/plots" --timeline-sequential "$WORK/sequential.trace.json" \
  --timeline-t3 "$WORK/t3-mca.trace.json" --gpu 0
for png in speedup dram timeline; do
  [ -s "$WORK/plots/$png.png" ] || fail "$WORK/plots/$png.png is missing or empty"
  head -c 8 "$WORK/plots/$png.png" | grep -q PNG || fail "$png.png is not a PNG"
done

# Without traces: no timeline.png.
"$PLOT" "$RESULTS" --out "$WORK/no-timeline" > /dev/null
[ -s "$WORK/no-timeline/speedup.png" ] && [ -s "$WORK/no-timeline/dram.png" ] ||
  fail "speedup.png/dram.png missing without traces"
[ ! -e "$WORK/no-timeline/timeline.png" ] || fail "timeline.png drawn without traces"

# Errors name the file and the field.
if "$PLOT" "$WORK/missing.json" --out "$WORK/bad" 2> "$WORK/err.txt"; then
  fail "a missing results file did not fail"
fi
grep -q "missing.json" "$WORK/err.txt" || fail "missing-file error does not name it: $(cat "$WORK/err.txt")"
/usr/bin/python3 - "$RESULTS" "$WORK/no-rs-update.json" <<'PY'
import json, sys
records = json.load(open(sys.argv[1]))
del records[1]["dram_bytes"]["rs_update"]
json.dump(records, open(sys.argv[2], "w"))
PY
if "$PLOT" "$WORK/no-rs-update.json" --out "$WORK/bad" 2> "$WORK/err.txt"; then
  fail "a results file without dram_bytes.rs_update did not fail"
fi
grep -q "no-rs-update.json.*dram_bytes.rs_update" "$WORK/err.txt" ||
  fail "missing-field error does not name file and field: $(cat "$WORK/err.txt")"
echo "plot_sweep: ok"
