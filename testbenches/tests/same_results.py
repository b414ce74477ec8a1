"""Exits non-zero, naming what differs, unless two sweep results.json files hold the same
records apart from wall_time_s (the only field that may differ between equal runs; a sweep's
results.json no longer has it, but a `t3sim compare --json` document does), naming the record.

    same_results.py A/results.json B/results.json
"""
import json
import sys


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k != "wall_time_s"}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


first, second = (strip(json.load(open(path))) for path in sys.argv[1:3])
if first != second:
    for k, (a, b) in enumerate(zip(first, second)):
        if a != b:
            keys = sorted(key for key in set(a) | set(b) if a.get(key) != b.get(key))
            sys.exit(f"record {k} differs between {sys.argv[1]} and {sys.argv[2]} in: {keys}")
    sys.exit(f"record counts differ: {len(first)} in {sys.argv[1]}, {len(second)} in {sys.argv[2]}")
