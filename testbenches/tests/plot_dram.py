# Test plot_dram: scripts/plot's dram.png shows MB (1e6 bytes), the unit of t3sim's tables, and
# no scenario label overlaps a bar. Draws the figure from made-up records (one workload near
# 1.2 GB, where a binary unit would have been chosen, and a small one), keeping the figure open
# to measure it.
#   python3 plot_dram.py SCRIPTS_DIR WORK_DIR
import argparse
import importlib.machinery
import importlib.util
import os
import sys

scripts, work = sys.argv[1], sys.argv[2]
sys.dont_write_bytecode = True
loader = importlib.machinery.SourceFileLoader("plot", os.path.join(scripts, "plot"))
spec = importlib.util.spec_from_loader("plot", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)

figures = []
plot.t3plot.save = lambda fig, out, program: figures.append(fig)


def record(model, scenario, scale):
    categories = {c: int(scale * (k + 1) * 1e7) for k, c in enumerate(plot.CATEGORIES)}
    return {"scenario": scenario, "model": model, "sublayer": "fc2", "tp": 8, "tokens": 8192,
            "time_ns": 1.0, "speedup_vs_sequential": 1.0, "dram_bytes": categories}


records = [record(m, s, scale) for m, scale in [("big", 4.3), ("small", 0.2)]
           for s in ["sequential", "t3-mca"]]
args = argparse.Namespace(out=work, width=0)
plot.plot_dram(records, plot.workloads(records, "made-up"), args, "made-up")
fig = figures[0]
ax = fig.axes[0]
fig.canvas.draw()
renderer = fig.canvas.get_renderer()

failures = []
if "(MB)" not in ax.get_ylabel():
    failures.append(f"y axis is not in MB: '{ax.get_ylabel()}'")
bars = [p for p in ax.patches]
tops = sorted({round(b.get_y() + b.get_height(), 6) for b in bars})
expected = sum(records[0]["dram_bytes"].values()) / 1e6  # big, sequential
if not any(abs(t - expected) < 1e-6 * expected for t in tops):
    failures.append(f"no bar tops at {expected} MB (the big workload's total); tops: {tops}")
labels = [t for t in ax.texts if t.get_text() in ("seq", "t3-mca")]
if len(labels) != 4:
    failures.append(f"expected 4 scenario labels, found {len(labels)}")
for label in labels:
    box = label.get_window_extent(renderer)
    for bar in bars:
        if box.overlaps(bar.get_window_extent(renderer)):
            failures.append(f"label '{label.get_text()}' overlaps a bar")
            break
    if not ax.get_window_extent(renderer).contains(box.x0, box.y1):
        failures.append(f"label '{label.get_text()}' leaves the axes")
if failures:
    sys.exit("plot_dram: " + "; ".join(failures))
print("plot_dram: ok")
