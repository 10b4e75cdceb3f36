#!/usr/bin/env python3
"""Auto-recall at scale: one person with N stored messages, all but a live
log of 20 archived (archive days written directly, in the real format: one
gzip member per compaction, `archive/U1/messages-YYYY-MM-DD.jsonl.gz`),
then indexed by `session reindex`.

Printed, per size:
- the added time per ask: `context --user U1 -- "<question>"` with recall
  on and with `recall.auto: false`, paired (alternating) runs, p50 of each
  and of the per-pair difference;
- peak RSS of a recall-on run (GNU time's maximum resident set size), and
  of the recall-on run without an index (every archive read whole);
- the index build time (`session reindex`), per 100 MB of messages (the
  archives' uncompressed JSONL), against `zcat archive/U1/*.gz | wc -l` of
  the same archives;
- the index's size against the archives'.

Texts: 6-20 words drawn from a Zipf-like vocabulary (5,000 made-up words,
rank r drawn with weight 1/r) plus 30 everyday words, so query terms have
the long postings of a real memory.

Usage: scale.py [--bin target/release/claude-session] [--sizes 10000,100000,1000000] [--runs 21]
"""
import argparse
import bisect
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMON = ("garden dinner weather movie train office coffee music sister brother puppy "
          "holiday beach mountain book class teacher market cooking bicycle concert "
          "painting football doctor museum festival island river camera guitar").split()
QUESTION = "what did my sister say about the puppy at the concert?"


def vocabulary(rng):
    syllables = "ka to ri ne mo su la pe di gu fa zo vi ba ch sh".split()
    words = set()
    while len(words) < 5000:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    words = sorted(words)
    weights = [1 / (r + 1) for r in range(len(words))]
    cumulative = []
    total = 0
    for w in weights:
        total += w
        cumulative.append(total)
    return words, cumulative, total


def days_for(n):
    # 10k: 100 days of 100; 100k: 500 of 200; 1M: 1,000 of 1,000.
    return {10_000: 100, 100_000: 500, 1_000_000: 1000}.get(n, max(1, n // 200))


def state_with(binary, n):
    rng = random.Random(n)
    words, cumulative, total = vocabulary(rng)

    def text(i):
        k = rng.randint(6, 20)
        picked = []
        for _ in range(k):
            if rng.random() < 0.25:
                picked.append(rng.choice(COMMON))
            else:
                picked.append(words[bisect.bisect(cumulative, rng.random() * total)])
        return f"message {i}: " + " ".join(picked)

    state = tempfile.mkdtemp(prefix=f"recall-scale-{n}-")
    subprocess.run([binary, "--state-dir", state, "-q", "init"], check=True,
                   stdout=subprocess.DEVNULL)
    sessions = os.path.join(state, "sessions")
    archive = os.path.join(sessions, "archive", "U1")
    os.makedirs(archive, mode=0o700)
    live = 20
    archived = n - live
    days = days_for(n)
    per_day = max(1, archived // days)
    start = datetime(2023, 1, 1, tzinfo=timezone.utc)
    raw_bytes = 0
    i = 0
    day = 0
    while i < archived:
        date = start + timedelta(days=day)
        lines = []
        for k in range(min(per_day, archived - i)):
            ts = date + timedelta(seconds=30 + k * (86000 // per_day))
            lines.append(json.dumps({"ts": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                                     "role": "user" if i % 2 == 0 else "assistant",
                                     "text": text(i)}) + "\n")
            i += 1
        blob = "".join(lines).encode()
        raw_bytes += len(blob)
        path = os.path.join(archive, f"messages-{date.strftime('%Y-%m-%d')}.jsonl.gz")
        # Compactions add a member each: four per day.
        with open(path, "wb") as f:
            quarter = len(lines) // 4 + 1
            for q in range(0, len(lines), quarter):
                f.write(gzip.compress("".join(lines[q:q + quarter]).encode(), 6))
        os.chmod(path, 0o600)
        day += 1
    stm = os.path.join(sessions, "stm", "U1")
    os.makedirs(stm, mode=0o700)
    now = datetime.now(timezone.utc) - timedelta(minutes=30)
    with open(os.path.join(stm, "messages.jsonl"), "w") as f:
        for k in range(live):
            ts = now + timedelta(seconds=k)
            f.write(json.dumps({"ts": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                                "role": "user" if k % 2 == 0 else "assistant",
                                "text": text(archived + k)}) + "\n")
    return state, raw_bytes


def timed(cmd, **kw):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    return (time.perf_counter() - t) * 1000


def rss_mb(cmd):
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True,
                         check=True).stderr.strip().splitlines()[-1]
    return int(out) / 1024


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "claude-session"))
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--runs", type=int, default=21)
    p.add_argument("--keep", action="store_true", help="leave the state dirs")
    a = p.parse_args()
    rows = []
    for n in map(int, a.sizes.split(",")):
        state, raw = state_with(a.bin, n)
        ctx = [a.bin, "--state-dir", state, "context", "--user", "U1", "--", QUESTION]
        cfg = os.path.join(state, "sessions", "config.json")
        archive = os.path.join(state, "sessions", "archive", "U1")
        rss_scan = rss_mb(ctx)
        zcat = timed(["sh", "-c", f"zcat {archive}/*.gz | wc -l"])
        build = timed([a.bin, "--state-dir", state, "-q", "session", "reindex"])
        index_bytes = du(os.path.join(state, "sessions", ".recall"))
        archive_bytes = du(archive)
        offs, ons, diffs = [], [], []
        for _ in range(a.runs):
            with open(cfg, "w") as f:
                json.dump({"recall": {"auto": False}}, f)
            off_ms = timed(ctx)
            os.remove(cfg)
            on_ms = timed(ctx)
            offs.append(off_ms)
            ons.append(on_ms)
            diffs.append(on_ms - off_ms)
        rss = rss_mb(ctx)
        per100 = 100e6 / raw
        rows.append((n, statistics.median(offs), statistics.median(ons), statistics.median(diffs),
                     rss, rss_scan, build * per100, zcat * per100, raw / 1e6,
                     archive_bytes / 1e6, index_bytes / 1e6))
        if a.keep:
            print(f"# {n}: {state}", flush=True)
        else:
            shutil.rmtree(state)
    print("| stored messages | p50 recall off | p50 recall on | p50 added | peak RSS (on, indexed) "
          "| peak RSS (on, no index) | index build per 100 MB | zcat \\| wc -l per 100 MB "
          "| messages (JSONL) | archives (gz) | index |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]:,} | {r[1]:.1f} ms | {r[2]:.1f} ms | {r[3]:.1f} ms | {r[4]:.1f} MB "
              f"| {r[5]:.1f} MB | {r[6] / 1000:.1f} s | {r[7] / 1000:.2f} s | {r[8]:.0f} MB "
              f"| {r[9]:.0f} MB | {r[10]:.0f} MB |")


if __name__ == "__main__":
    main()
