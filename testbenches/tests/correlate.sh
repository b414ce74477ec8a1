#!/bin/sh
# scripts/correlate exits 1 when a model figure leaves its tolerance, 0 when every one is within it,
# and 2 naming the file, line and key for a bad data file. Fake data directories hold one HBM
# point (measured as the model's own figure, then as a tenth of it) and one small GEMM, then one
# small interference point.
# Usage: correlate.sh SCRIPT T3SIM WORKDIR
set -u
correlate=$1 t3sim=$2 work=$3
rm -rf "$work" && mkdir -p "$work/within" "$work/outside" "$work/bad" "$work/lower-above" \
  "$work/lower-below" "$work/bad-bound" || exit 1
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
# A measured lower bound (bound = lower): the model 30% above it is within, 20% below is not.
below=$(python3 -c "print($read_GBps / 1.3)")
above=$(python3 -c "print($read_GBps * 1.25)")
printf 'pattern,measured_GBps,tolerance,bound\nread,%s,0.10,lower\n' "$below" \
  > "$work/lower-above/hbm.csv"
printf 'pattern,measured_GBps,tolerance,bound\nread,%s,0.10,lower\n' "$above" \
  > "$work/lower-below/hbm.csv"
printf 'pattern,measured_GBps,tolerance,bound\nread,%s,0.10,upper\n' "$read_GBps" \
  > "$work/bad-bound/hbm.csv"

# expect NAME CODE PATTERN WHY ARGS...: runs the script on $work/NAME with ARGS, fails unless it
# exits CODE and its log has a line matching PATTERN (WHY says what the line shows).
expect() {
  name=$1 expected=$2 pattern=$3 why=$4
  shift 4
  "$correlate" --binary "$t3sim" --data "$work/$name" "$@" > "$work/$name.log" 2>&1
  code=$?
  if [ $code -ne "$expected" ]; then
    echo "$name: exit $code, expected $expected"; cat "$work/$name.log"; exit 1
  fi
  grep -q -- "$pattern" "$work/$name.log" || { echo "$name: $why"; cat "$work/$name.log"; exit 1; }
}

expect within 0 "2 of 2 model figures within their tolerance" "no '2 of 2' summary" --only hbm,gemm
expect outside 1 "1 of 2 model figures within their tolerance; 1 outside" \
  "the row is not marked" --only hbm,gemm
grep -q "OUTSIDE" "$work/outside.log" || { echo "outside: no OUTSIDE row"; cat "$work/outside.log"; exit 1; }
expect bad 2 "hbm.csv' line 2: measured_GBps = 'fast' is not a number" \
  "the message does not name the place" --only hbm
expect lower-above 0 ">= -10%  ok" "the model above a lower bound is not within" --only hbm
expect lower-below 1 "1 outside" "the model below a lower bound is not outside" --only hbm
expect bad-bound 2 "hbm.csv' line 2: bound = 'upper' is not one of value, lower" \
  "the message does not name the bound" --only hbm

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

expect intf-within 0 "2 of 2 model figures within their tolerance" \
  "no '2 of 2' summary (a probe row and an interference row)" --only interference
expect intf-step 1 "streaming probe alone" "no probe row" --only interference
grep -A3 "streaming probe alone" "$work/intf-step.log" | grep -q OUTSIDE || {
  echo "intf-step: the probe's rate with a 56 KiB step is not outside"
  cat "$work/intf-step.log"; exit 1; }
expect intf-mixed 2 "has rows of stream_step_bytes 8192, 57344" \
  "the message does not name the steps" --only interference
echo "correlate: exit 0 within, 1 outside, 2 on bad data; lower bounds one-sided"
