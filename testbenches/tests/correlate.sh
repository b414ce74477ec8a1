#!/bin/sh
# scripts/correlate exits 1 when a model figure leaves its tolerance, 0 when every one is within it,
# and 2 naming the file, line and key for a bad data file. Fake data directories hold one HBM
# point (measured as the model's own figure, then as a tenth of it) and one small GEMM, then one
# small interference point.
# Usage: correlate.sh SCRIPT T3SIM WORKDIR
set -u
correlate=$1 t3sim=$2 work=$3
rm -rf "$work" && mkdir -p "$work/within" "$work/outside" "$work/bad" || exit 1
"$t3sim" bandwidth --system h100-8 --pattern read --json "$work/read.json" >/dev/null || exit 1
"$t3sim" gemm --system h100-8 --shape 512,256,128 --json "$work/gemm.json" >/dev/null || exit 1
read_GBps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["measured_GBps"])' \
            "$work/read.json")
gemm_us=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["time_ns"] / 1e3)' \
          "$work/gemm.json")
tenth=$(python3 -c "print($read_GBps / 10)")
printf 'pattern,measured_GBps,tolerance\nread,%s,0.10\n' "$read_GBps" > "$work/within/hbm.csv"
printf 'model,tp,sublayer,m,n,k,measured_us,tolerance\ntest,8,fc2,512,256,128,%s,0.10\n' \
       "$gemm_us" > "$work/within/gemm.csv"
printf 'pattern,measured_GBps,tolerance\nread,%s,0.10\n' "$tenth" > "$work/outside/hbm.csv"
cp "$work/within/gemm.csv" "$work/outside/gemm.csv"
printf 'pattern,measured_GBps,tolerance\nread,fast,0.10\n' > "$work/bad/hbm.csv"

"$correlate" --binary "$t3sim" --data "$work/within" --only hbm,gemm > "$work/within.log" 2>&1
code=$?
if [ $code -ne 0 ]; then echo "within: exit $code, expected 0"; cat "$work/within.log"; exit 1; fi
grep -q "2 of 2 model figures within their tolerance" "$work/within.log" || {
  echo "within: no '2 of 2' summary"; cat "$work/within.log"; exit 1; }

"$correlate" --binary "$t3sim" --data "$work/outside" --only hbm,gemm > "$work/outside.log" 2>&1
code=$?
if [ $code -ne 1 ]; then echo "outside: exit $code, expected 1"; cat "$work/outside.log"; exit 1; fi
grep -q "OUTSIDE" "$work/outside.log" && grep -q "1 of 2 model figures within their tolerance; 1 outside" \
  "$work/outside.log" || { echo "outside: the row is not marked"; cat "$work/outside.log"; exit 1; }

"$correlate" --binary "$t3sim" --data "$work/bad" --only hbm > "$work/bad.log" 2>&1
code=$?
if [ $code -ne 2 ]; then echo "bad: exit $code, expected 2"; cat "$work/bad.log"; exit 1; fi
grep -q "hbm.csv' line 2: measured_GBps = 'fast' is not a number" "$work/bad.log" || {
  echo "bad: the message does not name the place"; cat "$work/bad.log"; exit 1; }
# Interference: one small point, measured as the model's own figures with an 8 KiB probe step.
# The same data with a 56 KiB step must put the probe's rate alone outside (the step reaches the
# run), and rows of one GEMM with two steps are refused.
"$t3sim" interference --system h100-8 --shape 2048,1024,512 --background-sms 8 \
  --stream-step-bytes 8192 --json "$work/interference.json" >/dev/null || exit 1
fields=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["points"][0]
print(p["background_GBps"], p["interference"])' "$work/interference.json")
set -- $fields
header='model,tp,sublayer,m,n,k,background_sms,stream_step_bytes,stream_GBps,stream_tolerance,interference,tolerance_points'
mkdir -p "$work/intf-within" "$work/intf-step" "$work/intf-mixed"
printf '%s\ntest,8,fc2,2048,1024,512,8,8192,%s,0.10,%s,0.05\n' "$header" "$1" "$2" \
  > "$work/intf-within/interference.csv"
printf '%s\ntest,8,fc2,2048,1024,512,8,57344,%s,0.10,%s,0.05\n' "$header" "$1" "$2" \
  > "$work/intf-step/interference.csv"
printf '%s\ntest,8,fc2,2048,1024,512,8,8192,%s,0.10,%s,0.05\ntest,8,fc2,2048,1024,512,16,57344,%s,0.10,%s,0.05\n' \
  "$header" "$1" "$2" "$1" "$2" > "$work/intf-mixed/interference.csv"

"$correlate" --binary "$t3sim" --data "$work/intf-within" --only interference \
  > "$work/intf-within.log" 2>&1
code=$?
if [ $code -ne 0 ]; then echo "interference within: exit $code, expected 0"; cat "$work/intf-within.log"; exit 1; fi
grep -q "2 of 2 model figures within their tolerance" "$work/intf-within.log" || {
  echo "interference within: no '2 of 2' summary (a probe row and an interference row)"
  cat "$work/intf-within.log"; exit 1; }

"$correlate" --binary "$t3sim" --data "$work/intf-step" --only interference \
  > "$work/intf-step.log" 2>&1
code=$?
if [ $code -ne 1 ]; then echo "interference step: exit $code, expected 1"; cat "$work/intf-step.log"; exit 1; fi
grep -A3 "streaming probe alone" "$work/intf-step.log" | grep -q OUTSIDE || {
  echo "interference step: the probe's rate with a 56 KiB step is not outside"
  cat "$work/intf-step.log"; exit 1; }

"$correlate" --binary "$t3sim" --data "$work/intf-mixed" --only interference \
  > "$work/intf-mixed.log" 2>&1
code=$?
if [ $code -ne 2 ]; then echo "interference mixed: exit $code, expected 2"; cat "$work/intf-mixed.log"; exit 1; fi
grep -q "has rows of stream_step_bytes 8192, 57344" "$work/intf-mixed.log" || {
  echo "interference mixed: the message does not name the steps"; cat "$work/intf-mixed.log"; exit 1; }
echo "correlate: exit 0 within, 1 outside, 2 on bad data"
