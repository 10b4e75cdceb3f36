#!/usr/bin/env python3
"""Measures claude-session on GlusterFS (default and strict options) and on a
local disk, in one run; prints one markdown table. Run by benches/shared-fs.sh,
which sets up the volumes and mounts.

Per setup, each a fresh state dir:
- append latency: LATENCY sequential `append` processes through mount 1
  (process start to exit), p50 and p99;
- throughput: 16 writer processes at once on one user, 8 through each
  mount (16 on the one folder for the local disk), PER_WRITER appends each
  (`durability.lockTimeoutMs` raised to 120 s: a waiter in a queue of 16
  on a network file system can wait longer than the default 10 s);
- compaction: `compact --user` of a user with 60 messages (threshold 50,
  window 10: 50 leave the log), the fake claude answering at once; median
  of COMPACTIONS runs.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run(cmd, env, stdin=None):
    result = subprocess.run(cmd, env=env, input=stdin, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, timeout=300)
    if result.returncode != 0:
        sys.exit(f"shared_fs.py: {' '.join(cmd[:4])} failed: {result.stderr.decode()[:300]}")


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


# Sixteen writers on one user queue for one lock; through a network file
# system a waiter can wait longer than the default 10 s.
CONFIG = {"durability": {"lockTimeoutMs": 120000}}


def measure(label, state1, state2, args, env):
    os.makedirs(f"{state1}/sessions", exist_ok=True)
    with open(f"{state1}/sessions/config.json", "w") as f:
        json.dump(CONFIG, f)
    # Latency: one writer, no contention.
    latencies = []
    for i in range(args.latency):
        started = time.perf_counter()
        run([args.bin, "--state-dir", state1, "append", "--user", "L", "--", f"latency {i}"], env)
        latencies.append((time.perf_counter() - started) * 1000)
    # Throughput: 16 writers on one user.
    writers = []
    started = time.perf_counter()
    for k in range(16):
        state = state1 if k % 2 == 0 else state2
        script = ('i=0; while [ $i -lt "$N" ]; do '
                  '"$BIN" --state-dir "$S" append --user T -- "w$K-$i" || exit 1; '
                  'i=$((i + 1)); done')
        writers.append(subprocess.Popen(
            ["sh", "-c", script],
            env={**env, "N": str(args.per_writer), "BIN": args.bin, "S": state, "K": str(k)},
            stdin=subprocess.DEVNULL))
    failed = sum(w.wait(timeout=600) != 0 for w in writers)
    if failed:
        sys.exit(f"shared_fs.py: {failed} writers failed on {label}")
    throughput = 16 * args.per_writer / (time.perf_counter() - started)
    # Compaction of 60 messages.
    lines = "".join(
        json.dumps({"ts": f"2026-03-23T03:{m // 60:02d}:{m % 60:02d}.000Z",
                    "role": "user" if m % 2 == 0 else "assistant",
                    "text": f"message {m} " + "words " * 20}) + "\n"
        for m in range(60)).encode()
    compactions = []
    for c in range(args.compactions):
        user = f"C{c}"
        run([args.bin, "--state-dir", state1, "append", "--user", user, "--jsonl", "-"], env, lines)
        started = time.perf_counter()
        run([args.bin, "--state-dir", state1, "compact", "--user", user], env)
        compactions.append((time.perf_counter() - started) * 1000)
    return {
        "label": label,
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "throughput": throughput,
        "compact": statistics.median(compactions),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--fake-claude", required=True)
    parser.add_argument("--setup", nargs=3, action="append", metavar=("LABEL", "STATE1", "STATE2"),
                        required=True)
    parser.add_argument("--latency", type=int, default=int(os.environ.get("LATENCY", 200)))
    parser.add_argument("--per-writer", type=int, default=int(os.environ.get("PER_WRITER", 25)))
    parser.add_argument("--compactions", type=int, default=int(os.environ.get("COMPACTIONS", 5)))
    args = parser.parse_args()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "CLAUDE_BIN": args.fake_claude,
        "FAKE_CLAUDE_REPLY": json.dumps({"summary": "A benchmark conversation."}),
    }
    rows = []
    for label, state1, state2 in args.setup:
        print(f"shared_fs.py: measuring {label}", file=sys.stderr, flush=True)
        rows.append(measure(label, state1, state2, args, env))
    local = rows[-1]
    print("| where | append p50 | append p99 | appends/s, 16 writers | compaction of 60 messages |")
    print("|---|---|---|---|---|")
    for row in rows:
        ratio = "" if row is local else (
            f" ({row['p50'] / local['p50']:.1f}×)",
            f" ({row['p99'] / local['p99']:.1f}×)",
            f" ({row['throughput'] / local['throughput']:.2f}×)",
            f" ({row['compact'] / local['compact']:.1f}×)")
        ratio = ratio or ("", "", "", "")
        print(f"| {row['label']} | {row['p50']:.1f} ms{ratio[0]} | {row['p99']:.1f} ms{ratio[1]} "
              f"| {row['throughput']:.0f}{ratio[2]} | {row['compact']:.0f} ms{ratio[3]} |")


if __name__ == "__main__":
    main()
