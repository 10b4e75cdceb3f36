#!/usr/bin/env python3
"""Added time of auto-recall at scale: one person with N stored messages
(all but the recent window archived, a day per 200 messages), `context
--user U -- "<question>"` with recall on and with `recall.auto: false`,
paired (alternating) runs, p50 of each and of the difference; peak RSS of
the recall runs (GNU time's maximum resident set size).

Usage: scale.py [--bin target/release/claude-session] [--sizes 10000,100000] [--runs 21]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORDS = ("garden dinner weather movie train office coffee music sister brother puppy "
         "holiday beach mountain book class teacher market cooking bicycle concert "
         "painting football doctor museum festival island river camera guitar").split()


def state_with(binary, n):
    rng = random.Random(n)
    state = tempfile.mkdtemp(prefix=f"recall-scale-{n}-")
    path = os.path.join(state, "import.jsonl")
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    with open(path, "w") as f:
        for i in range(n):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20)))
            ts = start + timedelta(days=i // 200, seconds=(i % 200) * 60)
            f.write(json.dumps({"ts": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                                "role": "user" if i % 2 == 0 else "assistant",
                                "text": f"message {i}: {words}"}) + "\n")
    subprocess.run([binary, "--state-dir", state, "-q", "append", "--user", "U1", "--jsonl", path], check=True)
    reply = json.dumps({"summary": "They talked.", "facts": {}})
    subprocess.run([binary, "--state-dir", state, "-q", "compact", "--user", "U1", "--force",
                    "--claude-bin", os.path.join(ROOT, "tests", "fake-claude")],
                   check=True, env=dict(os.environ, FAKE_CLAUDE_REPLY=reply, CLAUDE_SESSION_CLAUDE_ENV="FAKE_CLAUDE_*"))
    os.remove(path)
    return state


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "claude-session"))
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--runs", type=int, default=21)
    a = p.parse_args()
    print("| stored messages | p50 recall off | p50 recall on | p50 added | peak RSS (recall on) |")
    print("|---|---|---|---|---|")
    for n in map(int, a.sizes.split(",")):
        state = state_with(a.bin, n)
        on = [a.bin, "--state-dir", state, "context", "--user", "U1", "--", "what did my sister say about the puppy at the concert?"]
        cfg = os.path.join(state, "sessions", "config.json")
        offs, ons, diffs = [], [], []
        for _ in range(a.runs):
            with open(cfg, "w") as f:
                json.dump({"recall": {"auto": False}}, f)
            off_ms = timed(on)
            os.remove(cfg)
            on_ms = timed(on)
            offs.append(off_ms); ons.append(on_ms); diffs.append(on_ms - off_ms)
        rss = subprocess.run(["/usr/bin/time", "-f", "%M", *on], capture_output=True, text=True).stderr.strip().splitlines()[-1]
        print(f"| {n} | {statistics.median(offs):.1f} ms | {statistics.median(ons):.1f} ms | "
              f"{statistics.median(diffs):.1f} ms | {int(rss) / 1024:.1f} MB |")


if __name__ == "__main__":
    main()
