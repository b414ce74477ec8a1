#!/bin/sh
# Test fused-bound: scripts/fused-bound's verdict rule on hand-made result and statistics
# documents (each bound once, and each threshold from both sides), its figures (link shares by
# direction, HBM rates, queue waits, MCA counts), a real `t3sim compare` run, and bad input
# (exit 2 naming the file and key).
#   fused_bound.sh SCRIPT T3SIM WORK_DIR
set -eu
SCRIPT=$1
T3SIM=$2
WORK=$3
PYTHON=/usr/bin/python3
fail() { echo "fused-bound: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK/run"
cd "$WORK"

# make_documents NAME 'JSON of per-column settings': writes NAME.result.json and NAME.stats.json,
# a TP 4 ring of one simulated GPU (2 HBM channels of one 4-entry queue each, 2 SMs) whose
# phases take the settings given (time_ns, link busy share, HBM busy share, queued entries).
make_documents() {
  "$PYTHON" - "$1" "$2" <<'PY'
import json, sys
name, settings = sys.argv[1], json.loads(sys.argv[2])
config = {"hbm": {"model": "bank", "channels": 2, "interleave_bytes": 256, "queue_depth": 4,
                  "bank": {"pseudo_channels": 1}}, "sm": {"count": 2}}
GEMM = 100000.0

def counters(s, time_ns):
    c = {"gpu0.hbm.busy_ns": s.get("hbm", 0.1) * 2 * time_ns,
         "gpu0.hbm.row_hits": 3, "gpu0.hbm.row_misses": 1,
         "gpu0.sm.busy_ns": 0.5 * 2 * time_ns, "gpu0.sm.budget_wait_ns": 3000.0,
         "gpu0.link.to_gpu3.busy_ns": s.get("link", 0.5) * time_ns,
         "gpu0.link.to_gpu1.busy_ns": 0.0,
         "gpu3.link.to_gpu0.busy_ns": 0.25 * time_ns}
    for op in ["read", "write", "update"]:
        for cls in ["compute", "communication"]:
            c[f"gpu0.hbm.bytes.{op}.{cls}"] = 0
            c[f"gpu0.hbm.requests.{op}.{cls}"] = 0
    # 1000 entries of 256 bytes of updates per class, 1 request each of 64 bytes of reads
    c["gpu0.hbm.bytes.update.compute"] = 256000
    c["gpu0.hbm.requests.update.compute"] = 10
    c["gpu0.hbm.bytes.update.communication"] = 256000
    c["gpu0.hbm.requests.update.communication"] = 1000
    c["gpu0.hbm.bytes.read.compute"] = 64 * 500
    c["gpu0.hbm.requests.read.compute"] = 500
    queued = s.get("queued", 0.2)  # entries per channel, split 3:1 compute:communication
    c["gpu0.hbm.queue.compute_entry_ns"] = 0.75 * queued * 2 * time_ns
    c["gpu0.hbm.queue.communication_entry_ns"] = 0.25 * queued * 2 * time_ns
    if "mca" in s:
        c["gpu0.hbm.mca.held_back"] = 7
        c["gpu0.hbm.mca.starvation_overrides"] = 2
        c["gpu0.hbm.mca.urgent_releases"] = 5
    return c

def record(scenario, phases, exposed):
    return {"scenario": scenario, "tp": 4, "config": config, "model": "test",
            "sublayer": "fc2", "tokens": 1024, "system": "hand-made", "symmetry": "none",
            "collective": "ring", "time_ns": sum(t for _, t, _ in phases) if phases else 0,
            "exposed_comm_ns": exposed,
            "phases": [{"name": n, "time_ns": t, "dram_bytes": b} for n, t, b in phases]}

RS = {"rs_read": 1, "rs_write": 0, "rs_update": 1}
ag = ("all_gather", 50000.0, {})
seq_rs = settings["rs"]["time_ns"]
t3, mca = settings["t3"], settings["t3-mca"]
results = [
    record("sequential", [("gemm", GEMM, {}), ("reduce_scatter", seq_rs, {}), ag],
           seq_rs + 50000.0),
    record("t3", [("gemm_rs", t3["time_ns"], RS), ag], 50000.0 + t3.get("exposed", 0.0)),
    record("t3-mca", [("gemm_rs", mca["time_ns"], mca.get("bytes", RS)), ag], 50000.0),
    record("ideal", [("gemm_rs", max(GEMM, seq_rs), {}), ag], 50000.0),
]
results[3]["ideal_reduce_scatter"] = {"used": "ring", "ring_ns": seq_rs}
runs = {"sequential": {"phases": {"gemm": counters({}, GEMM),
                                  "reduce_scatter": counters(settings["rs"], seq_rs)}},
        "t3": {"phases": {"gemm_rs": counters(t3, t3["time_ns"])}},
        "t3-mca": {"phases": {"gemm_rs": counters(dict(mca, mca=1), mca["time_ns"])}}}
json.dump(results, open(f"{name}.result.json", "w"))
json.dump({"format": "t3sim-stats-1", "runs": runs}, open(f"{name}.stats.json", "w"))
PY
}

# Case a: the reduce-scatter's link at 90% (link-bound at the threshold), t3 at 1.05x the GEMM
# (GEMM-bound at the threshold), t3-mca at 1.2x with HBM 80% busy (HBM-bound by the bus).
make_documents a '{"rs": {"time_ns": 120000, "link": 0.90},
                   "t3": {"time_ns": 105000, "link": 0.89},
                   "t3-mca": {"time_ns": 120000, "hbm": 0.80, "bytes": {"rs_read": 0}}}'
# Case b: just under each threshold: the link at 89.9%, t3 at 1.051x with its queues 49% full
# (latency/flow-control bound), t3-mca with its queues half full (HBM-bound by the queues);
# the GEMM longer than the reduce-scatter, so ideal is GEMM-bound.
make_documents b '{"rs": {"time_ns": 90000, "link": 0.899},
                   "t3": {"time_ns": 105100, "queued": 1.96, "hbm": 0.799, "exposed": 20000},
                   "t3-mca": {"time_ns": 120000, "queued": 2.0}}'
"$PYTHON" "$SCRIPT" --result a.result.json --stats a.stats.json --json a.json > a.md
"$PYTHON" "$SCRIPT" --result b.result.json --stats b.stats.json --json b.json > b.md

"$PYTHON" - <<'PY'
import json
a, b = json.load(open("a.json")), json.load(open("b.json"))
bounds = lambda r: {c: v["bound"] for c, v in r["columns"].items()}
assert bounds(a) == {"sequential gemm": "GEMM-bound", "sequential rs": "link-bound",
                     "t3": "GEMM-bound", "t3-mca": "HBM-bound",
                     "ideal": "reduce-scatter-bound"}, bounds(a)
assert bounds(b) == {"sequential gemm": "GEMM-bound",
                     "sequential rs": "latency/flow-control bound",
                     "t3": "latency/flow-control bound", "t3-mca": "HBM-bound",
                     "ideal": "GEMM-bound"}, bounds(b)
t3 = b["columns"]["t3"]
# Link shares: the busiest direction named, the ring's two directions averaged separately.
assert t3["link_busiest"] == "gpu0 -> gpu3", t3["link_busiest"]
assert t3["link_share_by_direction"] == {"GPU g -> g+1": 0.25 / 2, "GPU g -> g-1": 0.5}, t3
# HBM: bus share as given; updates 2 x 256000 bytes over 105.1 us; 3 of 4 row hits.
assert abs(t3["hbm_busy_share"] - 0.799) < 1e-9, t3["hbm_busy_share"]
assert abs(t3["update_GBps_per_gpu"] - 512000 / 105100) < 1e-9, t3["update_GBps_per_gpu"]
assert t3["row_hit_rate"] == 0.75, t3["row_hit_rate"]
# SM: math pipes half busy; 3 us of request-capacity wait over 2 SMs.
assert t3["sm_busy_share"] == 0.5 and t3["sm_budget_wait_ns_per_sm"] == 1500.0, t3
# Queue: 1.96 entries per channel, 1.47 compute; the compute entries are 1000 granules of
# updates and 500 sub-granule reads, so the wait per entry is the integral over 1500.
queue = t3["queue"]["compute"]
assert abs(queue["mean_entries_per_channel"] - 1.47) < 1e-9, queue
assert abs(queue["mean_wait_ns"] - 0.75 * 1.96 * 2 * 105100 / 1500) < 1e-6, queue
assert abs(t3["queue_fill"] - 0.49) < 1e-9, t3["queue_fill"]
# The fused phase's exposed communication is exposed_comm_ns less the all-gather.
assert t3["exposed_comm_ns"] == 20000 and t3["gemm_active_ns"] == 85100, t3
assert b["columns"]["t3-mca"]["mca"] == {"held_back": 7, "starvation_overrides": 2,
                                          "urgent_releases": 5}
assert "mca" not in t3
# The note on compute-class partial sums names t3-mca (no rs bytes) in case a, none in b.
assert len(a["notes"]) == 1 and a["notes"][0].startswith("t3-mca:"), a["notes"]
assert b["notes"] == [], b["notes"]
text = open("a.md").read()
assert "- sequential rs: link-bound: the busiest link direction (gpu0 -> gpu3) is 90.0% busy" \
    in text, text
assert "| MCA held back | - | - | - | 7 | - |" in text, text
PY

# A real comparison: the script's fused phase is compare's, and each run column has a bound.
"$PYTHON" "$SCRIPT" --t3sim "$T3SIM" --model mega-gpt-2 --sublayer op --tp 4 --tokens 1024 \
  --set sm.count=8 --out run --json run.json > run.md
"$PYTHON" - <<'PY'
import json
report = json.load(open("run.json"))
records = {r["scenario"]: r for r in json.load(open("run/result.json"))}
for scenario in ["t3", "t3-mca"]:
    fused = next(p for p in records[scenario]["phases"] if p["name"] == "gemm_rs")
    column = report["columns"][scenario]
    assert column["time_ns"] == fused["time_ns"], (scenario, column["time_ns"])
    assert 0 < column["link_busiest_share"] <= 1 and 0 < column["hbm_busy_share"] <= 1, column
    assert column["update_GBps_per_gpu"] > 0, column
assert "mca" in report["columns"]["t3-mca"] and "mca" not in report["columns"]["t3"]
assert all(c["bound"] for c in report["columns"].values()), report["columns"]
PY

expect_error() {  # expect_error MESSAGE ARGS...: exit 2 with MESSAGE on stderr
  message=$1
  shift
  code=0
  "$PYTHON" "$SCRIPT" "$@" > /dev/null 2> err.txt || code=$?
  [ "$code" -eq 2 ] || fail "exit $code, expected 2: $*"
  grep -q -- "$message" err.txt || fail "no '$message' for: $* ($(cat err.txt))"
}
expect_error "result and --stats go together" --result a.result.json
"$PYTHON" - <<'PY'
import json
stats = json.load(open("a.stats.json"))
del stats["runs"]["t3"]["phases"]["gemm_rs"]
json.dump(stats, open("missing.stats.json", "w"))
PY
expect_error "'missing.stats.json' runs.t3.phases: no key 'gemm_rs'" \
  --result a.result.json --stats missing.stats.json
expect_error "'nothing.json': No such file" --result nothing.json --stats a.stats.json
expect_error "t3sim compare failed (exit [0-9]*): .*'nope'" --t3sim "$T3SIM" --model nope
echo "fused-bound: ok"
