# Shared drawing code for t3sim's plotting scripts (scripts/plot-timeline, scripts/plot): reading
# a Chrome trace-event timeline written by t3sim (models/system/timeline.h) and drawing one GPU's
# tracks as a strip of rows: complete events as bars (a track's lanes "name #k" stacked inside one
# row), instants as ticks, counters as step plots, and the phases as shaded spans across every row.
# Runs on Debian's python3 with python3-matplotlib (scripts/install-deps).
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)

LANE = re.compile(r"^(.*) #(\d+)$")
GPU = re.compile(r"^gpu (\d+)$")
COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac"]
CATEGORY_COLOURS = {"dma": "#e15759", "link": "#59a14f"}


def load_trace(path, program):
    """The trace document and its event list; exits naming the file if it is not a trace."""
    try:
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as error:
        sys.exit(f"{program}: cannot read '{path}': {error}")
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        sys.exit(f"{program}: '{path}': not a Chrome trace (no 'traceEvents' list)")
    return trace, events


def names(events):
    """Process names, thread names and their sort keys from the metadata events."""
    processes, threads, process_order, thread_order = {}, {}, {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        key = (e["pid"], e["tid"])
        args = e.get("args", {})
        if e["name"] == "process_name":
            processes[e["pid"]] = args["name"]
        elif e["name"] == "thread_name":
            threads[key] = args["name"]
        elif e["name"] == "process_sort_index":
            process_order[e["pid"]] = args["sort_index"]
        elif e["name"] == "thread_sort_index":
            thread_order[key] = args["sort_index"]
    return processes, threads, process_order, thread_order


def chosen_pids(processes, gpus):
    """GPU processes asked for (all, plus the switch, by default); never the phases process."""
    pids = []
    for pid, name in processes.items():
        match = GPU.match(name)
        if match:
            if gpus is None or int(match.group(1)) in gpus:
                pids.append(pid)
        elif name == "switch" and gpus is None:
            pids.append(pid)
    return pids


def build_rows(events, processes, threads, process_order, thread_order, pids):
    """One row per track of the chosen processes, lanes merged: (label, kind, lanes, events)."""
    rows = {}
    for e in events:
        if e.get("ph") == "M" or e["pid"] not in pids:
            continue
        thread = threads.get((e["pid"], e["tid"]), str(e["tid"]))
        match = LANE.match(thread)
        track, lane = (match.group(1), int(match.group(2)) - 1) if match else (thread, 0)
        key = (e["pid"], track)
        row = rows.setdefault(key, {"label": f"{processes[e['pid']]}  {track}", "lanes": 1,
                                    "events": [], "kind": "bars",
                                    "order": (process_order.get(e["pid"], e["pid"]),
                                              thread_order.get((e["pid"], e["tid"]), e["tid"]))})
        row["order"] = min(row["order"], (process_order.get(e["pid"], e["pid"]),
                                          thread_order.get((e["pid"], e["tid"]), e["tid"])))
        row["lanes"] = max(row["lanes"], lane + 1)
        if e["ph"] == "C":
            row["kind"] = "counter"
        row["events"].append((lane, e))
    return [rows[k] for k in sorted(rows, key=lambda k: rows[k]["order"])]


def bar_colour(e):
    if e.get("cat") == "workgroup":
        return COLOURS[int(e.get("args", {}).get("launch", 0)) % len(COLOURS)]
    return CATEGORY_COLOURS.get(e.get("cat"), "#4e79a7")


def draw_bars(ax, row):
    height = 1.0 / row["lanes"]
    bars = {}
    for lane, e in row["events"]:
        if e["ph"] == "X":
            bars.setdefault((lane, bar_colour(e)), []).append((e["ts"], e.get("dur", 0)))
        elif e["ph"] in ("i", "I"):
            ax.vlines(e["ts"], 0, 1, colors="#333333", linewidth=0.6)
    for (lane, colour), spans in sorted(bars.items()):
        y = 1.0 - (lane + 1) * height
        # A hairline edge keeps back-to-back events (one workgroup after another) apart.
        ax.broken_barh(spans, (y + 0.05 * height, 0.9 * height), facecolors=colour,
                       edgecolors="white", linewidth=0.2)
    ax.set_ylim(0, 1)
    ax.set_yticks([])


def draw_counter(ax, row, end):
    series = {}
    for _, e in row["events"]:
        for name, value in sorted(e.get("args", {}).items()):
            series.setdefault(name, ([], []))
            series[name][0].append(e["ts"])
            series[name][1].append(value)
    for k, (name, (xs, ys)) in enumerate(sorted(series.items())):
        ax.step(xs + [end], ys + [ys[-1]], where="post", linewidth=0.8, label=name,
                color=COLOURS[k % len(COLOURS)])
    ax.set_ylim(bottom=0)
    ax.tick_params(axis="y", labelsize=6)
    if series:
        ax.legend(loc="upper right", fontsize=6, frameon=False, ncol=len(series))


def trace_end(trace, events):
    end = 0.0
    for e in events:
        if e.get("ph") != "M":
            end = max(end, e.get("ts", 0) + e.get("dur", 0))
    if isinstance(trace, dict):
        end = max(end, trace.get("otherData", {}).get("simulated_end_us", 0))
    return end


def load_strip(path, gpus, program):
    """The rows of the chosen GPUs (None: all, and the switch), the phases and the end time (us)
    of the trace at `path`; exits naming the file if it has no such tracks."""
    trace, events = load_trace(path, program)
    processes, threads, process_order, thread_order = names(events)
    pids = chosen_pids(processes, gpus)
    rows = build_rows(events, processes, threads, process_order, thread_order, pids)
    if not rows:
        shown = "all" if gpus is None else ",".join(str(g) for g in sorted(gpus))
        sys.exit(f"{program}: no tracks for GPUs {shown} in '{path}'")
    phases = [e for e in events if e.get("ph") == "X" and e.get("cat") == "phase"]
    return rows, phases, trace_end(trace, events)


def row_heights(rows):
    """Relative height of each row: counters tall, bar rows growing with their lanes."""
    return [2.0 if r["kind"] == "counter" else 0.5 + 0.15 * min(r["lanes"], 8) for r in rows]


def draw_strip(axes, rows, phases, end):
    """Draws `rows` into `axes` (one axis per row, sharing x) with the phases shaded and named
    above the first row."""
    for ax, row in zip(axes, rows):
        if row["kind"] == "counter":
            draw_counter(ax, row, end)
        else:
            draw_bars(ax, row)
        ax.set_ylabel(row["label"], rotation=0, ha="right", va="center", fontsize=7)
        for k, p in enumerate(phases):
            ax.axvspan(p["ts"], p["ts"] + p.get("dur", 0), color=COLOURS[k % len(COLOURS)],
                       alpha=0.08, linewidth=0)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    for k, p in enumerate(phases):
        axes[0].text(p["ts"], 1.02, p["name"], transform=axes[0].get_xaxis_transform(),
                     fontsize=7, va="bottom", color=COLOURS[k % len(COLOURS)])


def save(fig, out, program):
    try:
        fig.savefig(out, dpi=150, bbox_inches="tight")
    except OSError as error:
        sys.exit(f"{program}: cannot write '{out}': {error}")
    plt.close(fig)
