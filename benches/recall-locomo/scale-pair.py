#!/usr/bin/env python3
"""Two binaries, each on its own copy of a scale.py state dir (kept with
--keep; copy it with `cp -a` and `session reindex` it with the second
binary when the index format differs), alternated round by round: per
round and binary, `context --user U1 -- "<question>"` with recall off
(`recall.auto: false`) and on. Prints, per binary, the p50 of the CPU
time (getrusage of the child) and wall time of each, and of the paired
difference (on - off).

Usage: scale-pair.py RUNS OLD_BIN OLD_STATE NEW_BIN NEW_STATE [QUESTION]
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

runs = int(sys.argv[1])
old_bin, old_state, new_bin, new_state = sys.argv[2:6]
question = sys.argv[6] if len(sys.argv) > 6 else "what did my sister say about the puppy at the concert?"


def run(binary, state, on):
    cfg = os.path.join(state, "sessions", "config.json")
    if on:
        if os.path.exists(cfg):
            os.remove(cfg)
    else:
        with open(cfg, "w") as f:
            json.dump({"recall": {"auto": False}}, f)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([binary, "--state-dir", state, "context", "--user", "U1", "--", question],
                   check=True, stdout=subprocess.DEVNULL)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000
    return cpu, (t1 - t0) * 1000


results = {"before": [], "after": []}
for i in range(runs):
    order = [("before", old_bin, old_state), ("after", new_bin, new_state)]
    if i % 2:
        order.reverse()
    for name, binary, state in order:
        off = run(binary, state, False)
        on = run(binary, state, True)
        results[name].append((off, on))
for name, r in results.items():
    def p50(f):
        return statistics.median(f(x) for x in r)
    print(f"{name}: cpu off {p50(lambda x: x[0][0]):.2f} on {p50(lambda x: x[1][0]):.2f} "
          f"added {p50(lambda x: x[1][0] - x[0][0]):.2f} ms | wall off {p50(lambda x: x[0][1]):.2f} "
          f"on {p50(lambda x: x[1][1]):.2f} added {p50(lambda x: x[1][1] - x[0][1]):.2f} ms")
