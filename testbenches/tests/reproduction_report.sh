#!/bin/sh
# Test reproduction_report: scripts/reproduction-report on a sweep's results.json writes the
# headline table with the measured figures computed from the records, names the binaries that
# ran the sweep and the paper workloads missing, and refuses two runs of one workload.
#   reproduction_report.sh SCRIPT RESULTS.json WORK_DIR
set -eu
SCRIPT=$1
RESULTS=$2
WORK=$3
PYTHON=/usr/bin/python3
fail() { echo "reproduction_report: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
# The fixture's suite varies the link bandwidth: keep one variation.
"$PYTHON" - "$RESULTS" <<'PY'
import json, sys
records = json.load(open(sys.argv[1]))
json.dump([r for r in records if r["point"]["index"] == 0], open("one.json", "w"))
PY
"$PYTHON" "$SCRIPT" one.json --out report.md --command "t3sim sweep --suite tiny" \
  --commit "abc1234=workloads 0-22" --commit "def5678=workloads 23-27" > report.log
"$PYTHON" - <<'PY'
import json, math
records = json.load(open("one.json"))
text = open("report.md").read()
mca = next(r for r in records if r["scenario"] == "t3-mca")
row = next(line for line in text.splitlines() if line.startswith("| t3-mca speedup geomean |"))
assert row.split("|")[3].strip() == f"{mca['speedup_vs_sequential']:.3f}", row
sequential = next(r for r in records if r["scenario"] == "sequential")
saved = 100 * (1 - mca["dram_bytes"]["total"] / sequential["dram_bytes"]["total"])
row = next(line for line in text.splitlines()
           if line.startswith("| DRAM data-movement reduction geomean |"))
assert row.split("|")[3].strip() == f"{saved:.1f}%", (row, saved)
assert "with the binaries of commits `abc1234` (workloads 0-22) and `def5678` (workloads 23-27)" \
    in text, "provenance"
assert "**Partial**: 28 of the paper's 28 workloads" in text, "missing workloads not listed"
assert "published (T3 paper)" in text and "| 1.30 (30%) |" in text, "published column"
# The MCA line counts the gate's decisions from the t3-mca record and says whether it changed t3.
t3 = next(r for r in records if r["scenario"] == "t3")
gate = mca["hbm_queue"]["mca"]
line = next(line for line in text.splitlines() if line.startswith("- **MCA.**"))
same = 1 if mca["time_ns"] == t3["time_ns"] else 0
assert f"equals t3's to the nanosecond in {same} of 1 workloads" in line, line
assert (f"held communication back at {gate['held_back']:.0f} picks, was opened by a starved "
        f"request at {gate['starvation_overrides']:.0f} and kept open by an urgent one at "
        f"{gate['urgent_releases']:.0f}") in line, line
PY
# Against a previous sweep: the same results before and now give equal columns.
"$PYTHON" "$SCRIPT" one.json --out changes.md --previous one.json --previous-label "itself" \
  > changes.log
"$PYTHON" - <<'PY'
text = open("changes.md").read()
assert "## Changes since itself" in text, "no changes section"
rows = [line for line in text.split("## Changes since itself")[1].splitlines()
        if line.startswith("| t3")]
assert rows, "no rows"
for row in rows:
    cells = [c.strip() for c in row.split("|")]
    assert cells[2] == cells[3], row
PY
# --e2e: the end-to-end table takes max and geomean of t3-mca per phase from the whole-model
# documents, beside the published end-to-end figures.
"$PYTHON" - <<'PY'
import json
def document(model, phase, mca):
    return {"model": model, "tp": 8, "phase": phase, "layers": 2, "kernels": [],
            "scenarios": [{"scenario": "sequential", "speedup_vs_sequential": 1.0},
                          {"scenario": "t3-mca", "speedup_vs_sequential": mca}]}
json.dump([document("a", "training", 1.10), document("b", "training", 1.05),
           document("a", "inference", 1.20)], open("e2e.json", "w"))
PY
"$PYTHON" "$SCRIPT" one.json --out e2e.md --e2e e2e.json --e2e-command "t3sim sweep --suite e2e" \
  > e2e.log
"$PYTHON" - <<'PY'
import math
text = open("e2e.md").read()
assert "## End to end" in text and "`t3sim sweep --suite e2e`" in text, "no e2e section"
row = next(line for line in text.splitlines() if line.startswith("| training |"))
cells = [c.strip() for c in row.split("|")]
assert cells[2] == "up to 12%", row
assert cells[3] == "1.100 (10.0%)", row
assert cells[4].startswith(f"{math.sqrt(1.10 * 1.05):.3f}"), row
row = next(line for line in text.splitlines() if line.startswith("| inference |"))
assert "up to 15%" in row and "1.200 (20.0%)" in row, row
assert "| a | 8 | inference | 2 | 1.200 |" in text, "per-model row"
PY
if "$PYTHON" "$SCRIPT" "$RESULTS" --out twice.md > twice.log 2>&1; then
  fail "two runs of one workload were accepted"
fi
grep -q "two sequential records for mega-gpt-2 op TP 2" twice.log || fail "no clear error: $(cat twice.log)"
echo "reproduction_report: ok"
