#!/usr/bin/env python3
"""The shared-file-system suite, run by tests/shared-fs/run.sh on two
mounts of one GlusterFS volume (each mount stands for one broker host).

1. The file-system primitives the tool relies on (so a client or kernel
   that changes them is noticed):
   - flock and POSIX locks taken through one mount exclude a taker through
     the other, and are released when the holder is SIGKILLed;
   - a file replaced by rename through one mount: the other mount, opening
     the name with O_DIRECT and syncing, either gets the new file or fails
     (ESTALE, ENOENT) -- never the old content, also while a third process
     holds the old file open on either mount; after such a failure, listing
     the folder and opening again (with the tool's pauses, until its lock
     deadline) gets the new file;
   - a file created through one mount is opened at once through the other;
   - a line appended through one mount: a read with O_DIRECT to the end
     through the other mount has it.
   What the tool works around (a plain open or read a moment later sees the
   old file or misses the line) is measured and printed, not required.
2. The tool: writers append through both mounts while `compact` and
   `maintain` loop through one. Then, read on the brick itself: every
   message acknowledged with exit 0 is in the log or an archive exactly
   once, no line is torn, and no failed append left its line behind.
3. Scale: with 20,000 people in the state dir, one `context` and one `ask`
   read no more directory entries than with 20 (strace counts the bytes of
   getdents64), and their times are printed as a ratio of one run.
4. Two hosts at once (issue 25), with default mount options: one message
   id through `ask` on both mounts (both exit 0, one user line, one
   reply), and `init` plus a first append to a fresh state dir from both
   (every one exits 0); each 50 rounds. Then a third mount is unmounted
   (`umount -l`) under a state dir: every command through it exits 3,
   nothing is created in the empty mount point, nothing reaches the volume.
5. Recall with an index (issue 24): past archive days indexed through
   mount 1; then through mount 1 an old day's archive grows (a new gzip
   member, renamed over it as compaction does) and a line is appended to
   the live log; at once, `context -- "question"` through mount 2 recalls
   both, and the days unchanged come from the index.
"""

import argparse
import errno
import fcntl
import gzip
import json
import mmap
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


# --- 1. primitives -----------------------------------------------------------

HOLDER = r"""
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
if sys.argv[2] == "flock":
    fcntl.flock(fd, fcntl.LOCK_EX)
else:
    fcntl.lockf(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(600)
"""


def try_lock(path, kind):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if kind == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    finally:
        os.close(fd)


def locks_exclude_across_mounts(m1, m2):
    for kind in ("flock", "posix"):
        name = f"prim/{kind}.lock"
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, f"{m1}/{name}", kind],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = holder.stdout.readline().strip()
            check(line == "locked", f"{kind}: a lock is taken through mount 1")
            check(not try_lock(f"{m2}/{name}", kind),
                  f"{kind}: the lock held through mount 1 excludes a taker through mount 2")
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait()
        deadline = time.monotonic() + 30
        freed = False
        while time.monotonic() < deadline and not freed:
            freed = try_lock(f"{m2}/{name}", kind)
            if not freed:
                time.sleep(0.05)
        check(freed, f"{kind}: SIGKILL of the holder releases it for mount 2 (within 30 s)")


BUFFER = mmap.mmap(-1, 1 << 20)  # page-aligned, for O_DIRECT


def open_synced(path):
    """One try of what the tool does: open with O_DIRECT and sync the open
    file. A name cached from before another host replaced the file fails
    here (ESTALE, or ENOENT from the sync)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        os.fsync(fd)
    except OSError:
        close_quietly(fd)
        raise
    return fd


def read_fd(fd):
    out, offset = b"", 0
    while True:
        n = os.preadv(fd, [BUFFER], offset)
        out += BUFFER[:n]
        offset += n
        if n < len(BUFFER):
            return out


# The tool's stale-name retry (src/store/shared.rs, `retry_stale`): list the
# folder, pause 1 ms doubling to 50 ms, until the lock deadline
# (`durability.lockTimeoutMs`, 10 s by default).
STALE_DEADLINE_S = 10.0
TRIES = []  # tries each read_direct took, for the printed figures


def close_quietly(fd):
    """Close a descriptor of a file found stale: GlusterFS's close (its
    flush) then fails ENOENT too, which the tool never sees (Rust's File
    ignores an error of close on drop)."""
    try:
        os.close(fd)
    except OSError:
        pass


class Absent(FileNotFoundError):
    """The open failed ENOENT and the name is not there either: what the
    tool takes for a file that does not exist."""


def read_direct(path, appended_in_place=False):
    """What the tool does (src/store/shared.rs, `open_synced` in
    `retry_stale`): open with O_DIRECT; an ENOENT there is a file that
    does not exist unless the name is still there (then a stale name);
    sync the open file (an ENOENT there is a stale name); refuse an old
    file that has no name left (nlink 0); read in aligned 1 MiB steps
    until a read comes back short. On a stale name (or ESTALE), list the
    folder, pause and try again until the lock deadline. For a file
    appended in place (the tool's .jsonl files), the folder is listed
    first: GlusterFS's quick-read otherwise serves the content it cached,
    even to O_DIRECT reads."""
    deadline = time.monotonic() + STALE_DEADLINE_S
    pause, tries = 0.001, 0
    stale = OSError(errno.ESTALE, "stale name", path)
    while True:
        tries += 1
        if appended_in_place:
            os.listdir(os.path.dirname(path))
        try:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_DIRECT | os.O_NOFOLLOW)
            except FileNotFoundError:
                if not os.path.lexists(path):
                    raise Absent(errno.ENOENT, "absent", path)
                raise stale
            try:
                os.fsync(fd)
            except FileNotFoundError:
                close_quietly(fd)
                raise stale
            if os.fstat(fd).st_nlink == 0:
                close_quietly(fd)
                raise stale
        except OSError as e:
            if e.errno != errno.ESTALE or time.monotonic() >= deadline:
                raise
            os.listdir(os.path.dirname(path))
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
            continue
        TRIES.append(tries)
        try:
            return read_fd(fd)
        finally:
            close_quietly(fd)


def read_plain(path):
    with open(path, "rb") as f:
        return f.read()


def replace(path, data):
    with open(f"{path}.tmp", "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.rename(f"{path}.tmp", path)


def renames_are_seen_across_mounts(m1, m2, rounds=int(os.environ.get("SHARED_FS_RENAME_ROUNDS", 30))):
    """A stale name is never the old content: it fails the open or the
    sync, with nobody else holding the old file, and with a third process
    holding it open on the writing or the reading mount. The tool reads
    this way and lists the folder only after such a failure."""
    path1, path2 = f"{m1}/prim/renamed", f"{m2}/prim/renamed"
    plain_stale = 0
    for i in range(rounds):
        replace(path1, b"plain %d\n" % i)
        while read_direct(path2) != b"plain %d\n" % i:
            time.sleep(0.01)
        read_plain(path2)
        replace(path1, b"plain new %d\n" % i)
        try:
            plain_stale += read_plain(path2) != b"plain new %d\n" % i
        except OSError:
            plain_stale += 1
    print(f"     measured: opening a name right after a rename through the other mount "
          f"gave the old file, ESTALE or ENOENT {plain_stale}/{rounds} times", flush=True)
    for holder in ("nobody", "mount 1", "mount 2"):
        old_content = fresh_first = 0
        errors = {}
        listed_stale = most_tries = 0
        listed_outcomes = {}
        for i in range(rounds):
            replace(path1, b"old %d\n" % i)
            # Mount 2 knows the old file (its name and content are cached).
            while read_direct(path2) != b"old %d\n" % i:
                time.sleep(0.01)
            read_plain(path2)
            held = None
            if holder != "nobody":
                held = os.open(path1 if holder == "mount 1" else path2, os.O_RDONLY)
            want = b"new %d\n" % i
            replace(path1, want)
            try:
                fd = open_synced(path2)
                try:
                    got = read_fd(fd)
                finally:
                    close_quietly(fd)
                if got == want:
                    fresh_first += 1
                else:
                    old_content += 1
            except OSError as e:
                name = errno.errorcode.get(e.errno, str(e.errno))
                errors[name] = errors.get(name, 0) + 1
            del TRIES[:]
            try:
                got = read_direct(path2)
                if got != want:
                    listed_stale += 1
                    what = "old content" if got == b"old %d\n" % i else f"content {got[:24]!r}"
                    listed_outcomes[what] = listed_outcomes.get(what, 0) + 1
            except OSError as e:
                listed_stale += 1
                name = "read as absent" if isinstance(e, Absent) else \
                    errno.errorcode.get(e.errno, str(e.errno))
                listed_outcomes[name] = listed_outcomes.get(name, 0) + 1
            most_tries = max(most_tries, *TRIES, 0)
            if held is not None:
                try:
                    os.close(held)
                except OSError:
                    pass
        print(f"     measured, old file held open by {holder}: right after a rename through "
              f"mount 1, an O_DIRECT open and sync through mount 2 got the new file "
              f"{fresh_first}/{rounds} times, failed {errors}", flush=True)
        check(old_content == 0,
              f"rename (old file held by {holder}): an O_DIRECT open and sync through mount 2 "
              f"never gives the old content ({old_content}/{rounds} did)")
        check(listed_stale == 0,
              f"rename (old file held by {holder}): after a failure, listing the folder and "
              f"opening again, as the tool does until the lock deadline, gets the new file "
              f"({rounds - listed_stale}/{rounds}; at most {most_tries} tries"
              f"{'; failed: ' + repr(listed_outcomes) if listed_outcomes else ''})")


def creations_are_seen_across_mounts(m1, m2, rounds=30):
    missed = 0
    for i in range(rounds):
        path1, path2 = f"{m1}/prim/created-{i}", f"{m2}/prim/created-{i}"
        check_absent = not os.path.exists(path2)  # mount 2 looked the name up
        replace(path1, b"created %d\n" % i)
        try:
            fd = open_synced(path2)
            try:
                got = read_fd(fd)
            finally:
                os.close(fd)
        except OSError:
            got = None
        if not check_absent or got != b"created %d\n" % i:
            missed += 1
    check(missed == 0,
          f"create: a file made through mount 1 right after mount 2 found its name absent is "
          f"opened (O_DIRECT, synced) through mount 2 at once ({rounds - missed}/{rounds})")


def appends_are_read_to_the_end_across_mounts(m1, m2, rounds=50):
    path1, path2 = f"{m1}/prim/appended", f"{m2}/prim/appended"
    with open(path1, "wb") as f:
        f.write(b"start\n")
    read_plain(path2)
    plain_missed = unlisted_missed = direct_missed = 0
    for i in range(rounds):
        line = b"line %d\n" % i
        fd = os.open(path1, os.O_WRONLY | os.O_APPEND)
        os.write(fd, line)
        os.fsync(fd)
        os.close(fd)
        if not read_plain(path2).endswith(line):
            plain_missed += 1
        if not read_direct(path2).endswith(line):
            unlisted_missed += 1
        if not read_direct(path2, appended_in_place=True).endswith(line):
            direct_missed += 1
    print(f"     measured: a plain read right after an append through the other mount "
          f"missed the line {plain_missed}/{rounds} times; one with O_DIRECT and a sync but "
          f"without listing the folder first, {unlisted_missed}/{rounds}", flush=True)
    check(direct_missed == 0,
          f"append: listed, O_DIRECT, synced: a read to the end through mount 2 has the line "
          f"({rounds - direct_missed}/{rounds})")


# --- 2. the tool ---------------------------------------------------------------

CONFIG = {
    "stm": {"contextWindow": 5},
    "compacting": {"threshold": 20},
    "durability": {"lockTimeoutMs": 60000},
}

WRITER = r"""
i=0
while [ "$i" -lt "$COUNT" ]; do
  text="$TAG-$i"
  "$BIN" --state-dir "$STATE" append --user "$USER_ID" -- "$text" 2>>"$ERRORS"
  echo "$text $?" >>"$RESULTS"
  i=$((i + 1))
done
"""

LOOP = r"""
while [ ! -e "$STOP" ]; do
  "$BIN" --state-dir "$STATE" "$@" >>"$ERRORS.out" 2>>"$ERRORS"
  echo "$?" >>"$RESULTS"
done
"""


def tool_round(args, work, round_no):
    user = f"U{round_no}"
    m1_state, m2_state = f"{args.m1}/state", f"{args.m2}/state"
    os.makedirs(f"{m1_state}/sessions", exist_ok=True)
    with open(f"{m1_state}/sessions/config.json", "w") as f:
        json.dump(CONFIG, f)
    env = dict(os.environ)
    env.update({
        "BIN": args.bin,
        "CLAUDE_BIN": args.fake_claude,
        "FAKE_CLAUDE_REPLY": json.dumps({"summary": "They chatted on a shared volume."}),
        "USER_ID": user,
        "COUNT": str(args.per_writer),
    })
    env.pop("FAKE_CLAUDE_LOG", None)
    os.makedirs(work, exist_ok=True)
    stop = f"{work}/stop-{round_no}"
    writers = []
    started = time.monotonic()
    for mount, state in (("m1", m1_state), ("m2", m2_state)):
        for k in range(args.writers):
            tag = f"r{round_no}-{mount}-w{k}"
            writers.append(subprocess.Popen(
                ["sh", "-c", WRITER],
                env={**env, "STATE": state, "TAG": tag,
                     "RESULTS": f"{work}/{tag}.results", "ERRORS": f"{work}/{tag}.err"},
                stdin=subprocess.DEVNULL))
    # `compact --user` of somebody with nothing stored is exit 9 (as for
    # every read command): the loops start once the first line is there.
    first_line = f"{m1_state}/sessions/stm/{user}/messages.jsonl"
    while not os.path.exists(first_line) and time.monotonic() < started + 30:
        time.sleep(0.05)
    check(os.path.exists(first_line), f"round {round_no}: the writers started")
    loops = []
    for name, argv in (("compact", ["compact", "--user", user]), ("maintain", ["maintain"])):
        loops.append((name, subprocess.Popen(
            ["sh", "-c", LOOP, "loop"] + argv,
            env={**env, "STATE": m1_state, "STOP": stop,
                 "RESULTS": f"{work}/{name}-{round_no}.codes",
                 "ERRORS": f"{work}/{name}-{round_no}.err"},
            stdin=subprocess.DEVNULL)))
    deadline = started + args.timeout
    for w in writers:
        w.wait(timeout=max(1, deadline - time.monotonic()))
    elapsed = time.monotonic() - started
    open(stop, "w").close()
    for _, loop in loops:
        loop.wait(timeout=120)

    # What each writer was told.
    acked, failed = set(), set()
    for mount in ("m1", "m2"):
        for k in range(args.writers):
            tag = f"r{round_no}-{mount}-w{k}"
            with open(f"{work}/{tag}.results") as f:
                for line in f:
                    text, code = line.split()
                    (acked if code == "0" else failed).add(text)
    total = args.writers * 2 * args.per_writer
    check(len(acked) + len(failed) == total, f"round {round_no}: all {total} appends ran")
    runs = {}
    loop_errors = []
    for name, _ in loops:
        with open(f"{work}/{name}-{round_no}.codes") as f:
            codes = [line.strip() for line in f]
        runs[name] = (len(codes), sum(c == "0" for c in codes))
        for suffix in (".err", ".err.out"):
            with open(f"{work}/{name}-{round_no}{suffix}") as f:
                loop_errors += [f"{name}: {line.strip()}" for line in f
                                if "error: " in line]

    # What is stored, read on the brick itself.
    sessions = f"{args.brick}/state/sessions"
    stored, torn = [], []
    log = f"{sessions}/stm/{user}/messages.jsonl"
    archived = 0
    sources = [log] if os.path.exists(log) else []
    archive_dir = f"{sessions}/archive/{user}"
    if os.path.isdir(archive_dir):
        sources += [f"{archive_dir}/{n}" for n in sorted(os.listdir(archive_dir))]
    for source in sources:
        opener = gzip.open if source.endswith(".gz") else open
        with opener(source, "rb") as f:
            for raw in f.read().split(b"\n"):
                if not raw.strip():
                    continue
                try:
                    stored.append(json.loads(raw)["text"])
                    archived += source.endswith(".gz")
                except (ValueError, KeyError):
                    torn.append(raw[:80])
    counts = {}
    for text in stored:
        counts[text] = counts.get(text, 0) + 1
    lost = [t for t in acked if counts.get(t, 0) == 0]
    duplicated = [t for t in acked if counts.get(t, 0) > 1]
    left_behind = [t for t in failed if counts.get(t, 0) > 0]
    unknown = [t for t in counts if t not in acked and t not in failed]

    print(f"     round {round_no}: {total} appends through 2 mounts in {elapsed:.1f} s "
          f"({total / elapsed:.0f}/s); {len(acked)} acknowledged, {len(failed)} failed; "
          f"compact ran {runs['compact'][0]} times ({runs['compact'][1]} exit 0), "
          f"maintain {runs['maintain'][0]} ({runs['maintain'][1]} exit 0); "
          f"{archived} lines archived, {len(stored) - archived} in the log", flush=True)
    if failed:
        for mount in ("m1", "m2"):
            for k in range(args.writers):
                path = f"{work}/r{round_no}-{mount}-w{k}.err"
                if os.path.getsize(path):
                    with open(path) as f:
                        print("     an append failed: " + f.readline().strip())
                    break
    for line in sorted(set(loop_errors))[:5]:
        print(f"     {line}")
    check(not lost, f"round {round_no}: no acknowledged message lost ({len(lost)} lost: {lost[:5]})")
    check(not duplicated,
          f"round {round_no}: none stored twice ({len(duplicated)}: {duplicated[:5]})")
    check(not torn, f"round {round_no}: no torn line ({len(torn)}: {torn[:3]})")
    check(not left_behind,
          f"round {round_no}: no failed append left its line ({len(left_behind)}: {left_behind[:5]})")
    check(not unknown, f"round {round_no}: nothing stored that nobody wrote ({unknown[:5]})")
    check(not failed, f"round {round_no}: every append succeeded ({len(failed)} failed)")
    check(archived > 0 and runs["compact"][1] > 0,
          f"round {round_no}: compaction ran and archived lines meanwhile")
    check(not loop_errors,
          f"round {round_no}: every compact and maintain run succeeded "
          f"({len(loop_errors)} errors)")
    return len(acked)


def asks_and_listings_work_across_mounts(args):
    """`ask` (its delivery lookup, budget and erase checks read the ledger
    and the log), a redelivery and the people listing, each through the
    other mount from the one that wrote: every read of a file opened
    `O_DIRECT` must be aligned, or GlusterFS refuses it."""
    env = dict(os.environ)
    env.update({"CLAUDE_BIN": args.fake_claude, "FAKE_CLAUDE_COST": "0.01"})
    env.pop("FAKE_CLAUDE_LOG", None)

    def run(mount, *argv):
        return subprocess.run([args.bin, "--state-dir", f"{mount}/state", *argv],
                              env=env, capture_output=True, text=True, timeout=120)

    first = run(args.m1, "ask", "--user", "A1", "--msg-id", "a1", "--", "hello there")
    # Exit 0 is not enough: a reply that could not be logged is a warning.
    check(first.returncode == 0 and not first.stderr, f"ask through mount 1 ({first.returncode}: {first.stderr.strip()[:200]})")
    second = run(args.m2, "ask", "--user", "A1", "--msg-id", "a2", "--", "hello again")
    check(second.returncode == 0 and not second.stderr,
          f"ask through mount 2 after mount 1 wrote the ledger "
          f"({second.returncode}: {second.stderr.strip()[:200]})")
    again = run(args.m2, "ask", "--user", "A1", "--msg-id", "a1", "--", "hello there")
    check(again.returncode == 0 and not again.stderr and again.stdout == first.stdout,
          f"a redelivery through mount 2 answers from the log ({again.returncode}: "
          f"{again.stderr.strip()[:200]})")
    users = run(args.m2, "session", "users")
    check(users.returncode == 0 and not users.stderr and "A1" in users.stdout,
          f"session users through mount 2 ({users.returncode}: {users.stderr.strip()[:200]})")


# --- 3. scale ----------------------------------------------------------------

def fill_on_brick(brick, folder, stem, suffix, content, start, end):
    """Files `stem{start..end}{suffix}` in `folder` (relative to the volume),
    written on the brick itself the way the server writes them (the file,
    its trusted.gfid, its .glusterfs/xx/yy/<gfid> hard link): tens of
    thousands in seconds, where creating them through a mount takes minutes.
    The folder itself was made through a mount."""
    for i in range(start, end):
        path = f"{brick}/{folder}/{stem}{i}{suffix}"
        gfid = uuid.uuid4()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, content)
        finally:
            os.close(fd)
        os.setxattr(path, "trusted.gfid", gfid.bytes)
        handles = f"{brick}/.glusterfs/{gfid.hex[0:2]}/{gfid.hex[2:4]}"
        os.makedirs(handles, exist_ok=True)
        os.link(path, f"{handles}/{gfid}")


def directory_bytes_read(argv, env, under):
    """The bytes of directory entries (getdents64) a command reads in
    folders under `under`, counted by strace."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as out:
        subprocess.run(["strace", "-f", "-y", "-e", "trace=getdents64", "-o", out.name, *argv],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=300, check=True)
        total = 0
        for line in out:
            m = re.search(r"getdents64\(\d+<([^>]*)>.*\)\s+=\s+(\d+)", line)
            if m and m.group(1).startswith(under):
                total += int(m.group(2))
        return total


def one_message_costs_the_same_with_more_people(args, people):
    """`context` and `ask` through mount 2 with 20 people in the state dir,
    then with `people`: the directory entries they read must not grow
    (profiles in the seed's flat `ltm/users/`, ledgers of earlier versions
    in the flat `costs/users/`)."""
    state = f"{args.m1}/scale"
    sessions = "scale/sessions"
    env = dict(os.environ)
    env.update({"CLAUDE_BIN": args.fake_claude, "FAKE_CLAUDE_COST": "0.01"})
    env.pop("FAKE_CLAUDE_LOG", None)
    # An explicit state dir must be made first (`init`).
    subprocess.run([args.bin, "init", state], env=env, check=True, timeout=60)
    for i in range(20):
        subprocess.run([args.bin, "--state-dir", state, "append", "--user", "U0", "--",
                        f"message {i}"], env=env, check=True, timeout=60)
    os.makedirs(f"{state}/sessions/ltm/users", exist_ok=True)
    os.makedirs(f"{state}/sessions/costs/users", exist_ok=True)
    with open(f"{state}/sessions/ltm/users/U0.md", "w") as f:
        f.write("---\nname: U0\n---\n- likes tea\n")
    profile = b"---\nname: someone\n---\n- likes tea\n"
    ledger = b'{"ts":"2026-03-23T03:28:32.123Z","costUsd":0.01}\n'
    m2_state = f"{args.m2}/scale"
    asks = iter(range(1_000_000))

    def measure():
        commands = {
            "context": [args.bin, "--state-dir", m2_state, "context", "--user", "U0"],
            "ask": None,
        }
        read, times = {}, {}
        for name in commands:
            def argv():
                if name == "ask":
                    return [args.bin, "--state-dir", m2_state, "ask", "--user", "U0",
                            "--msg-id", f"s{next(asks)}", "--", "hello"]
                return commands[name]
            read[name] = directory_bytes_read(argv(), env, f"{args.m2}/scale")
            runs = []
            for _ in range(5):
                started = time.perf_counter()
                subprocess.run(argv(), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=True, timeout=120)
                runs.append(time.perf_counter() - started)
            times[name] = sorted(runs)[len(runs) // 2]
        return read, times

    def fill(start, end):
        fill_on_brick(args.brick, f"{sessions}/ltm/users", "P", ".md", profile, start, end)
        fill_on_brick(args.brick, f"{sessions}/costs/users", "P", ".jsonl", ledger, start, end)

    fill(1, 20)
    os.sync()
    small_read, small_times = measure()
    started = time.monotonic()
    fill(20, people)
    # Written out before timing: else the tool's first syncs wait for the
    # brick's journal to commit the new files.
    os.sync()
    print(f"     {people} people's profiles and ledgers written on the brick in "
          f"{time.monotonic() - started:.0f} s", flush=True)
    big_read, big_times = measure()
    for name in ("context", "ask"):
        print(f"     {name}: directory entries read {small_read[name]} bytes with 20 people, "
              f"{big_read[name]} with {people}; median {small_times[name] * 1000:.0f} ms, "
              f"{big_times[name] * 1000:.0f} ms ({big_times[name] / small_times[name]:.2f}x)",
              flush=True)
        check(big_read[name] <= small_read[name] + 4096,
              f"{name} with {people} people reads no more directory entries than with 20 "
              f"({big_read[name]} bytes against {small_read[name]})")


def brick_lines(brick, rel):
    """The message lines of a log, read on the brick itself (no client)."""
    try:
        with open(f"{brick}/{rel}", "rb") as f:
            return [json.loads(line) for line in f.read().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def two_hosts_answer_one_message(args, rounds):
    """The same `--msg-id` through `ask` on both mounts at once (a webhook
    delivered to two hosts): both exit 0 with the same reply, one answers
    and the other replays or waits, and the log holds one user line and
    one reply (issue 25: one of the two used to exit 3 with "Stale file
    handle" on the inflight lock in 90 of 90 rounds)."""
    env = dict(os.environ)
    env.update({"CLAUDE_BIN": args.fake_claude, "FAKE_CLAUDE_SLEEP": "0.2"})
    env.pop("FAKE_CLAUDE_LOG", None)
    failures = []
    for r in range(rounds):
        user = f"D{r}"
        procs = [subprocess.Popen(
            [args.bin, "--state-dir", f"{mount}/state", "ask", "--user", user,
             "--msg-id", f"dup-{r}", "--", f"hello {r}"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for mount in (args.m1, args.m2)]
        outs = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
        lines = brick_lines(args.brick, f"state/sessions/stm/{user}/messages.jsonl")
        roles = [m.get("role") for m in lines]
        ok = (all(code == 0 for _, _, code in outs) and outs[0][0] == outs[1][0]
              and roles == ["user", "assistant"])
        if not ok:
            failures.append(f"round {r}: exits {[c for _, _, c in outs]}, roles {roles}, "
                            f"stderr {[e.strip()[:160] for _, e, _ in outs]}")
    check(not failures, f"one message id through both mounts at once, {rounds} rounds: "
          f"both exit 0, one user line and one reply ({len(failures)} failed"
          + (f"; first: {failures[0]}" if failures else "") + ")")


def two_hosts_write_a_fresh_state_dir(args, rounds):
    """`init` and then the first appends to a fresh state dir from both
    mounts at once: every one exits 0 and both lines are there (issue 25:
    a rare exit 3 "File exists" from two mkdirs racing)."""
    env = dict(os.environ)
    env.pop("FAKE_CLAUDE_LOG", None)
    failures = []
    for r in range(rounds):
        state = f"fresh-{r}"

        def both(*argv):
            procs = [subprocess.Popen(
                [args.bin, "--state-dir", f"{mount}/{state}", *argv, f"{name}"]
                if argv[0] == "append" else [args.bin, *argv, f"{mount}/{state}"],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for mount, name in ((args.m1, "from m1"), (args.m2, "from m2"))]
            return [(p.communicate(timeout=120)[1], p.returncode) for p in procs]

        inits = both("init")
        appends = both("append", "--user", "F1", "--")
        texts = sorted(m.get("text") for m in
                       brick_lines(args.brick, f"{state}/sessions/stm/F1/messages.jsonl"))
        codes = [c for _, c in inits + appends]
        if codes != [0, 0, 0, 0] or texts != ["from m1", "from m2"]:
            failures.append(f"round {r}: exits {codes}, lines {texts}, stderr "
                            f"{[e.strip()[:160] for e, _ in inits + appends if e.strip()]}")
    check(not failures, f"init and a first append from both mounts at once, {rounds} rounds "
          f"({len(failures)} failed" + (f"; first: {failures[0]}" if failures else "") + ")")


def a_vanished_mount_fails_loudly(args):
    """`umount -l` of a mount under a state dir (issue 25: 879 appends
    through it exited 0 into a state dir made in the empty mount point):
    every command now exits 3, nothing is created there, nothing reaches
    the volume."""
    env = dict(os.environ)
    env.update({"CLAUDE_BIN": args.fake_claude})
    env.pop("FAKE_CLAUDE_LOG", None)
    state = f"{args.m3}/gone"

    def run(*argv):
        return subprocess.run([args.bin, "--state-dir", state, *argv], env=env,
                              capture_output=True, text=True, timeout=120)

    made = subprocess.run([args.bin, "init", state], env=env, capture_output=True, text=True,
                          timeout=120)
    first = run("append", "--user", "V1", "--", "before")
    check(made.returncode == 0 and first.returncode == 0,
          f"init and an append through mount 3 ({made.returncode}, {first.returncode}: "
          f"{(made.stderr + first.stderr).strip()[:200]})")
    gone = subprocess.run(["umount", "-l", args.m3], capture_output=True, text=True, timeout=60)
    check(gone.returncode == 0, f"umount -l mount 3 ({gone.stderr.strip()[:200]})")
    codes = {}
    for name, argv in (("append", ["append", "--user", "V1", "--", "after"]),
                       ("ask", ["ask", "--user", "V1", "--", "after"]),
                       ("maintain", ["maintain", "-q"]),
                       ("status", ["session", "status"])):
        codes[name] = run(*argv).returncode
    check(all(code == 3 for code in codes.values()),
          f"through the vanished mount every command exits 3 ({codes})")
    check(not os.listdir(args.m3), f"nothing was created in the empty mount point "
          f"({os.listdir(args.m3)[:5]})")
    texts = [m.get("text") for m in brick_lines(args.brick, "gone/sessions/stm/V1/messages.jsonl")]
    check(texts == ["before"], f"nothing reached the volume after the unmount ({texts})")


def recall_through_the_other_mount_sees_fresh_messages(args, rounds=5):
    """The recall index never hides what another host wrote a moment ago."""
    env = dict(os.environ)
    env.pop("FAKE_CLAUDE_LOG", None)
    failures = []
    for r in range(rounds):
        state = f"recall-{r}"
        subprocess.run([args.bin, "init", f"{args.m1}/{state}"], check=True, capture_output=True,
                       timeout=120, env=env)
        archive = f"{args.m1}/{state}/sessions/archive/R1"
        os.makedirs(archive, mode=0o700, exist_ok=True)
        for day in range(1, 4):
            lines = "".join(json.dumps({
                "ts": f"2026-02-0{day}T10:{k:02d}:00.000Z", "role": "user",
                "text": f"small talk {day} {k} about the weather"}) + "\n" for k in range(30))
            with open(f"{archive}/messages-2026-02-0{day}.jsonl.gz", "wb") as f:
                f.write(gzip.compress(lines.encode()))
        subprocess.run([args.bin, "--state-dir", f"{args.m1}/{state}", "-q", "maintain", "--only",
                        "index"], check=True, capture_output=True, timeout=120, env=env)
        # Another host's compaction: a member added, the archive renamed over.
        path = f"{archive}/messages-2026-02-02.jsonl.gz"
        with open(path, "rb") as f:
            old = f.read()
        late = json.dumps({"ts": "2026-02-02T23:00:00.000Z", "role": "user",
                           "text": f"my parrot Kiwi{r} eats sunflower seeds", "msgId": "late"})
        with open(path + ".tmp", "wb") as f:
            f.write(old + gzip.compress((late + "\n").encode()))
            f.flush()
            os.fsync(f.fileno())
        os.replace(path + ".tmp", path)
        subprocess.run([args.bin, "--state-dir", f"{args.m1}/{state}", "append", "--user", "R1",
                        "--msg-id", "fresh", "--", f"my cousin Theo{r} moved to Reykjavik"],
                       check=True, capture_output=True, timeout=120, env=env)
        found = {}
        for key, question in (("late", f"what does Kiwi{r} the parrot eat?"),
                              ("fresh", f"where did Theo{r} move?")):
            out = subprocess.run([args.bin, "--state-dir", f"{args.m2}/{state}", "--json",
                                  "context", "--user", "R1", "--window", "0", "--explain", "--",
                                  question], capture_output=True, text=True, timeout=120,
                                 env=env)
            try:
                data = json.loads(out.stdout)
                found[key] = ([m.get("msgId") for m in data["recalled"]],
                              data["explain"]["recall"]["indexedDays"])
            except (ValueError, KeyError) as e:
                found[key] = (f"exit {out.returncode}: {out.stderr.strip()[:160]} {e}", 0)
        ok = ("late" in found["late"][0] and "fresh" in found["fresh"][0]
              and found["late"][1] >= 2)
        if not ok:
            failures.append(f"round {r}: {found}")
    check(not failures, f"recall through mount 2 finds an archive grown and a line appended "
          f"through mount 1 a moment ago, with an index, {rounds} rounds ({len(failures)} failed"
          + (f"; first: {failures[0]}" if failures else "") + ")")


def run_issue_25_checks(args):
    print(f"two hosts at once ({args.two_host_rounds} rounds each), and a vanished mount:",
          flush=True)
    subprocess.run([args.bin, "init", f"{args.m1}/state"], check=True, capture_output=True,
                   timeout=120)
    two_hosts_answer_one_message(args, args.two_host_rounds)
    two_hosts_write_a_fresh_state_dir(args, args.two_host_rounds)
    recall_through_the_other_mount_sees_fresh_messages(args)
    a_vanished_mount_fails_loudly(args)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m1", required=True)
    parser.add_argument("--m2", required=True)
    parser.add_argument("--brick", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--fake-claude", required=True)
    parser.add_argument("--writers", type=int, default=int(os.environ.get("SHARED_FS_WRITERS", 8)))
    parser.add_argument("--per-writer", type=int,
                        default=int(os.environ.get("SHARED_FS_PER_WRITER", 100)))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("SHARED_FS_ROUNDS", 2)))
    parser.add_argument("--timeout", type=int, default=600, help="seconds per round")
    parser.add_argument("--people", type=int,
                        default=int(os.environ.get("SHARED_FS_PEOPLE", 20000)))
    parser.add_argument("--m3", required=True, help="a third mount, unmounted by the suite")
    parser.add_argument("--two-host-rounds", type=int,
                        default=int(os.environ.get("SHARED_FS_TWO_HOST_ROUNDS", 50)))
    parser.add_argument("--only", choices=["primitives", "tool", "scale", "hosts"],
                        help="run one part (for working on it)")
    parser.add_argument("--only-new", action="store_true",
                        help="only the two-host and unmount checks (= --only hosts)")
    args = parser.parse_args()
    if args.only_new:
        args.only = "hosts"

    if args.only in (None, "primitives"):
        os.makedirs(f"{args.m1}/prim", exist_ok=True)
        print("primitives (two mounts of one GlusterFS volume, default options):", flush=True)
        locks_exclude_across_mounts(args.m1, args.m2)
        renames_are_seen_across_mounts(args.m1, args.m2)
        creations_are_seen_across_mounts(args.m1, args.m2)
        appends_are_read_to_the_end_across_mounts(args.m1, args.m2)

    if args.only in (None, "tool"):
        print(f"the tool: {args.writers} writers per mount, compact and maintain looping "
              f"through mount 1:", flush=True)
        work = f"{os.path.dirname(args.brick)}/suite"
        acked = sum(tool_round(args, work, r) for r in range(1, args.rounds + 1))
        print(f"     {acked} acknowledged appends checked in all", flush=True)
        print("ask, a redelivery and session users through the other mount:", flush=True)
        asks_and_listings_work_across_mounts(args)

    if args.only in (None, "scale"):
        print(f"one message with 20 and with {args.people} people in the state dir, "
              f"through mount 2:", flush=True)
        one_message_costs_the_same_with_more_people(args, args.people)

    if args.only in (None, "hosts"):
        run_issue_25_checks(args)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
