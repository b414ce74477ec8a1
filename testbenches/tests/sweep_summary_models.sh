#!/bin/sh
# Test sweep_summary_models: a suite of several models gets one table per model and a table of
# all of them whose rows name their model (the per-model tables do not need the column).
#   sweep_summary_models.sh T3SIM WORK_DIR
set -eu
T3SIM=$1
WORK=$2
fail() { echo "sweep_summary_models: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
cat > suite.json <<'JSON'
{"name": "two", "models": ["mega-gpt-2", "t-nlg"], "tp": [4], "sublayers": ["op"],
 "tokens": [1024], "scenarios": ["sequential", "t3"]}
JSON
"$T3SIM" sweep --suite suite.json --out out --jobs 2 > sweep.log 2>&1 || fail "sweep failed"
/usr/bin/python3 - <<'PY'
text = open("out/summary.md").read()
assert "## All models" in text, "no table of all models"
everything = text.split("## All models")[1]
assert "| model | TP | sublayer |" in everything, "the table of all models has no model column"
rows = [line for line in everything.splitlines() if line.startswith("| ") and "**" not in line]
models = [line.split("|")[1].strip() for line in rows[1:]]  # after the header
assert models == ["mega-gpt-2", "t-nlg"], models
geomean = next(line for line in everything.splitlines() if "**geomean**" in line)
header = everything.splitlines()[2]
assert geomean.count("|") == header.count("|"), (geomean, header)
per_model = text.split("## All models")[0]
assert "| model |" not in per_model, "per-model tables grew a model column"
PY
echo "sweep_summary_models: ok"
