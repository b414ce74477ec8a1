#!/bin/sh
# Test sweep_kill: a sweep killed with SIGKILL takes its simulation processes with it. Starts a
# sweep of one long workload (every GPU of t-nlg FC-2 at TP 8, several seconds per simulation),
# kills it once a simulation process exists, and requires that none of them is alive 2 s later.
#   sweep_kill.sh T3SIM WORK_DIR
set -eu
T3SIM=$1
WORK=$2
fail() { echo "sweep_kill: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
echo '{"models": ["t-nlg"], "sublayers": ["fc2"], "tp": [8], "scenarios": ["t3-mca"]}' \
  > "$WORK/suite.json"
"$T3SIM" sweep --suite "$WORK/suite.json" --out "$WORK/out" --full --jobs 2 \
  > "$WORK/sweep.log" 2>&1 &
sweep=$!

# A process is alive if it exists and is not a zombie waiting to be reaped.
alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat"; }

children=""
tries=0
while [ -z "$children" ]; do
  children=$(pgrep -P "$sweep" || true)
  tries=$((tries + 1))
  [ $tries -le 100 ] || { kill -9 "$sweep"; fail "no simulation process started within 10 s"; }
  sleep 0.1
done
sleep 0.5  # let the second simulation start too
children=$(pgrep -P "$sweep" || true)
kill -9 "$sweep"
wait "$sweep" 2> /dev/null || true

tries=0
while :; do
  survivors=""
  for child in $children; do
    if alive "$child"; then survivors="$survivors $child"; fi
  done
  [ -n "$survivors" ] || break
  tries=$((tries + 1))
  if [ $tries -gt 20 ]; then
    for child in $survivors; do kill -9 "$child" 2> /dev/null || true; done
    fail "simulation processes$survivors outlived their killed sweep by 2 s"
  fi
  sleep 0.1
done
echo "sweep_kill: ok (simulation processes $(echo $children) ended with the sweep)"
