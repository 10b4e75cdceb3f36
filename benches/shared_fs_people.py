#!/usr/bin/env python3
"""One message's cost against the number of people in the state dir, on
GlusterFS (default options) and on a local disk, for one or two builds, in
one run; prints markdown tables. Run by benches/shared-fs-people.sh, which
sets up the volume and the mount.

Per build and setup, one state dir: U0 with 20 messages in the log, a
profile and a ledger; then N other people's profiles (`ltm/users/P<i>.md`,
the seed's flat folder) and ledgers in the flat folder earlier versions
used (`costs/users/P<i>.jsonl`), N = 20, 5,000, 20,000, 100,000 (--people).
At each N: `context --user U0` and `ask --user U0` (the fake claude
answering at once), whole-process medians. On GlusterFS the files are
written on the brick as the server writes them (the file, its
trusted.gfid, its .glusterfs hard link): 100,000 through the mount would
take the better part of an hour.

Then the commands that walk everyone, for the last build on GlusterFS: a
fresh state dir with A and then B people who each have a log (written with
`append`, 8 at a time), `session users`, `session search` and `maintain`
timed at both; the difference over B - A is the cost per person.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

PROFILE = b"---\nname: someone\n---\n- likes tea\n"
LEDGER = b'{"ts":"2026-03-23T03:28:32.123Z","costUsd":0.01}\n'


def say(*what):
    print("shared_fs_people.py:", *what, file=sys.stderr, flush=True)


def fill(folder, brick_folder, stem, suffix, content, start, end):
    """Files stem{start..end}suffix in folder: on the brick when given."""
    for i in range(start, end):
        if brick_folder is None:
            with open(f"{folder}/{stem}{i}{suffix}", "wb") as f:
                f.write(content)
            continue
        path = f"{brick_folder}/{stem}{i}{suffix}"
        gfid = uuid.uuid4()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, content)
        os.close(fd)
        os.setxattr(path, "trusted.gfid", gfid.bytes)
        brick = brick_folder.split("/state-")[0]
        handles = f"{brick}/.glusterfs/{gfid.hex[0:2]}/{gfid.hex[2:4]}"
        os.makedirs(handles, exist_ok=True)
        os.link(path, f"{handles}/{gfid}")


def timed(argv, env, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=1200)
        if result.returncode != 0:
            sys.exit(f"shared_fs_people.py: {' '.join(argv[2:6])} failed: "
                     f"{result.stderr.decode()[:300]}")
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def scale(bin_, state, brick_state, counts, env, asks):
    sessions = f"{state}/sessions"
    for i in range(20):
        subprocess.run([bin_, "--state-dir", state, "append", "--user", "U0", "--",
                        f"message {i} " + "words " * 10], env=env, check=True)
    os.makedirs(f"{sessions}/ltm/users", exist_ok=True)
    os.makedirs(f"{sessions}/costs/users", exist_ok=True)
    with open(f"{sessions}/ltm/users/U0.md", "w") as f:
        f.write("---\nname: U0\n---\n- likes tea\n- studies for the TOEIC\n")
    subprocess.run([bin_, "--state-dir", state, "ask", "--user", "U0", "--", "hi"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    brick = None if brick_state is None else f"{brick_state}/sessions"
    have, rows = 1, {}
    for n in counts:
        for folder, stem, suffix, content in (("ltm/users", "P", ".md", PROFILE),
                                              ("costs/users", "P", ".jsonl", LEDGER)):
            fill(f"{sessions}/{folder}", None if brick is None else f"{brick}/{folder}",
                 stem, suffix, content, have, n)
        have = n
        # Written out before timing: else the first syncs of the tool (on
        # a shared file system every fresh read syncs its file) wait for
        # the journal to commit tens of thousands of new files.
        os.sync()
        runs = 7 if n <= 20_000 else 5
        context = timed([bin_, "--state-dir", state, "context", "--user", "U0"], env, runs)
        ask = timed([bin_, "--state-dir", state, "ask", "--user", "U0", "--msg-id",
                     f"m{next(asks)}", "--", "hello"], env, 1)
        ask = statistics.median([ask] + [
            timed([bin_, "--state-dir", state, "ask", "--user", "U0", "--msg-id",
                   f"m{next(asks)}", "--", "hello"], env, 1) for _ in range(runs - 1)])
        rows[n] = (context, ask)
        say(f"{n} people: context {context:.0f} ms, ask {ask:.0f} ms")
    return rows


def walkers(bin_, state, counts, env):
    """`session users`, `session search`, `maintain` with counts[0] and
    counts[1] people, each with a log of 3 messages."""
    have, out = 0, {}
    for n in counts:
        script = ('i=$A; while [ $i -lt "$B" ]; do '
                  'for m in 1 2 3; do "$BIN" --state-dir "$S" append --user "W$i" -- "hello $m" '
                  '|| exit 1; done; i=$((i + 8)); done')
        procs = [subprocess.Popen(["sh", "-c", script],
                                  env={**env, "A": str(have + k), "B": str(n), "BIN": bin_,
                                       "S": state}) for k in range(8)]
        if any(p.wait() != 0 for p in procs):
            sys.exit("shared_fs_people.py: writing the people failed")
        have = n
        out[n] = {
            "session users": timed([bin_, "--state-dir", state, "session", "users"], env, 3),
            "session search": timed([bin_, "--state-dir", state, "session", "search", "hello",
                                     "--limit", "1"], env, 3),
            "maintain": timed([bin_, "--state-dir", state, "maintain"], env, 3),
        }
        say(f"walkers at {n} people: {out[n]}")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", nargs=2, action="append", metavar=("LABEL", "BIN"),
                        required=True)
    parser.add_argument("--fake-claude", required=True)
    parser.add_argument("--gluster", nargs=2, metavar=("MOUNT", "BRICK"), required=True)
    parser.add_argument("--local", required=True)
    parser.add_argument("--people", default="20,5000,20000,100000")
    parser.add_argument("--walkers", default="500,2000")
    args = parser.parse_args()
    counts = [int(n) for n in args.people.split(",")]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "CLAUDE_BIN": args.fake_claude,
        "FAKE_CLAUDE_COST": "0.01",
    }
    asks = iter(range(10**9))
    mount, brick = args.gluster
    results = []
    for label, bin_ in args.build:
        for where, root, brick_root in (("GlusterFS, default options", mount, brick),
                                        ("local disk", args.local, None)):
            name = f"state-{len(results)}"
            say(f"measuring {label} on {where}")
            rows = scale(bin_, f"{root}/{name}", None if brick_root is None
                         else f"{brick_root}/{name}", counts, env, asks)
            results.append((label, where, rows))
    print("| build | where | people | `context --user U0` | `ask` (fake claude) |")
    print("|---|---|---|---|---|")
    for label, where, rows in results:
        base = rows[counts[0]]
        for n in counts:
            context, ask = rows[n]
            print(f"| {label} | {where} | {n:,} | {context:.0f} ms ({context / base[0]:.2f}×) "
                  f"| {ask:.0f} ms ({ask / base[1]:.2f}×) |")
    walk_counts = [int(n) for n in args.walkers.split(",")]
    label, bin_ = args.build[-1]
    say(f"measuring the commands that walk everyone ({label}, GlusterFS)")
    out = walkers(bin_, f"{mount}/walkers", walk_counts, env)
    a, b = walk_counts
    print()
    print(f"| command ({label}, GlusterFS) | {a:,} people | {b:,} people | per person |")
    print("|---|---|---|---|")
    for command in out[a]:
        per = (out[b][command] - out[a][command]) / (b - a)
        print(f"| `{command}` | {out[a][command]:.0f} ms | {out[b][command]:.0f} ms "
              f"| {per * 1000:.0f} µs |")


if __name__ == "__main__":
    main()
