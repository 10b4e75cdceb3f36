#!/usr/bin/env python3
"""Time to first byte of `ask --stream` (see BENCHMARKS.md, "Time to first
byte").

    benches/ttfb.py                  # 10 rounds, about 2 minutes
    RUNS=20 benches/ttfb.py

The real Claude Code CLI answers from the loopback mock of the Messages API
(tests/mock-messages-api.py), which streams a 320-character reply as 20 text
chunks 100 ms apart. Three commands run in rounds, in turn (A B C A B C …),
so load from other processes hits them alike:

  A  claude called directly with the argv, environment, working folder,
     system prompt and stdin `ask --stream` gives it (recorded once by a
     wrapper); the figure is the time to its first text_delta event line
  B  `ask --stream`: the time to its first byte on stdout (the first delta)
  C  `ask` without --stream: the time to its first byte (the whole reply)
  D  `ask --stream` with claude behind a relay that notes the moments it
     reads claude's first text_delta line and its result line (then passes
     each on): the time from the first text_delta to ask's first byte, and
     from the first text_delta to the result (when the whole reply exists)
  E  `ask` without --stream behind the same relay: the time from claude's
     result line to ask's first byte
D and E measure within one run, so claude's start-up time (the noise in
A-C on a busy machine) is not in them.

Every time of A-C is from just before the spawn. Each `ask` uses a new user, so the
context, and the request, are the same every round. Prints a markdown table
(medians) on stdout; progress on stderr.

Builds with cargo build --release --locked first. Needs python3 and the
pinned CLI: target/claude-code/<version>/node_modules/.bin/claude (the test
suite installs it: cargo test --test integration real_stream::), or CLAUDE_BIN.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(os.environ.get("RUNS", "10"))
TEXT = "".join("piece %02d of 20, " % i for i in range(20))
MESSAGE = "Tell me about the twenty pieces."


def say(*args):
    print(*args, file=sys.stderr, flush=True)


def real_claude():
    if os.environ.get("CLAUDE_BIN"):
        return os.environ["CLAUDE_BIN"]
    root = os.path.join(REPO, "target", "claude-code")
    for version in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, version, "node_modules", ".bin", "claude")
        if os.access(path, os.X_OK):
            return path
    sys.exit("ttfb.py: no claude; run `cargo test --test integration real_stream::` once or set CLAUDE_BIN")


RELAY = r"""#!/usr/bin/env python3
import os, subprocess, sys, time
proc = subprocess.Popen([%r] + sys.argv[1:], stdout=subprocess.PIPE)
out, first, result = sys.stdout.buffer, None, None
for line in iter(proc.stdout.readline, b""):
    now = time.monotonic()
    out.write(line)
    out.flush()
    if first is None and b'"text_delta"' in line:
        first = now
    if line.startswith(b'{"type":"result"'):
        result = now
code = proc.wait()
with open(%r, "w") as f:
    f.write(repr((first, result)))
sys.exit(code)
"""


def first_byte(argv, env, cwd, stdin, want=None, clock=time.perf_counter):
    """Seconds from spawn to the first stdout byte (or, with `want`, to the
    end of the first line containing it); the process is then read to its
    end and must exit 0."""
    start = clock()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(stdin)
    proc.stdin.close()
    fd = proc.stdout.fileno()
    seen, buf = None, b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        if seen is None:
            if want is None:
                seen = clock() - start
            else:
                buf += chunk
                for line in buf.split(b"\n")[:-1]:
                    if want in line:
                        seen = clock() - start
                        break
    err = proc.stderr.read()
    if proc.wait() != 0 or seen is None:
        sys.exit("ttfb.py: %s failed (%s): %s" % (argv[0], proc.returncode, err.decode()[-2000:]))
    return seen


def main():
    claude = real_claude()
    say("building: cargo build --release --locked")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=REPO, check=True)
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or "unknown"
    if subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "src", "Cargo.toml",
                       "Cargo.lock"], capture_output=True, text=True).stdout.strip():
        rev += " + uncommitted changes in src/"
    binary = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")),
                          "release", "claude-session")
    if not os.access(binary, os.X_OK):
        sys.exit("ttfb.py: build first: cargo build --release --locked")
    work = tempfile.mkdtemp(prefix="ttfb-")
    mock = None
    try:
        mock_dir = os.path.join(work, "mock")
        mock = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "mock-messages-api.py"),
                                 mock_dir], stdin=subprocess.DEVNULL)
        port_file = os.path.join(mock_dir, "port")
        while not os.path.exists(port_file):
            time.sleep(0.02)
        with open(port_file) as f:
            base_url = "http://127.0.0.1:%s" % f.read().strip()
        with open(os.path.join(mock_dir, "default.json"), "w") as f:
            json.dump({"text": TEXT, "chunk_delay": 0.1}, f)

        state = os.path.join(work, "state")
        home = os.path.join(work, "home")
        os.makedirs(home)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
               "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-bench-dummy"}

        # Record what ask gives claude: argv, environment, folder, prompt.
        record = os.path.join(work, "record")
        os.makedirs(record)
        wrapper = os.path.join(work, "record-claude")
        with open(wrapper, "w") as f:
            f.write("""#!/bin/sh
r=%s
for a in "$@"; do printf '%%s\\0' "$a"; done > "$r/argv"
env -0 > "$r/env"
pwd > "$r/cwd"
prev=
for a in "$@"; do
  case $prev in --system-prompt-file|--append-system-prompt-file) cp "$a" "$r/prompt" ;; esac
  prev=$a
done
cat > "$r/stdin"
mkdir -p "$r/work" "$r/home"
exec %s "$@" < "$r/stdin"
""" % (record, claude))
        os.chmod(wrapper, 0o755)
        ask = [binary, "--state-dir", state, "ask", "--claude-bin"]
        subprocess.run(ask + [wrapper, "--stream", "--user", "record", "--", MESSAGE],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(record, "argv"), "rb") as f:
            argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
        with open(os.path.join(record, "env"), "rb") as f:
            claude_env = dict(kv.decode().split("=", 1) for kv in f.read().split(b"\0") if kv)
        with open(os.path.join(record, "stdin"), "rb") as f:
            stdin = f.read()
        # The call's private folders are gone: give the direct call its own
        # copies (an empty working folder and home, the same prompt file).
        sandbox_home = claude_env["HOME"]
        claude_env = {k: v.replace(sandbox_home, os.path.join(record, "home"))
                      for k, v in claude_env.items()}
        for i, a in enumerate(argv):
            if i > 0 and argv[i - 1] in ("--system-prompt-file", "--append-system-prompt-file"):
                argv[i] = os.path.join(record, "prompt")
        direct = [claude] + argv
        say("claude", " ".join(direct[1:]))

        def fresh_home():
            shutil.rmtree(os.path.join(record, "home"), ignore_errors=True)
            os.makedirs(os.path.join(record, "home"))

        relay = os.path.join(work, "relay-claude")
        noted = os.path.join(work, "relay-noted")
        with open(relay, "w") as f:
            f.write(RELAY % (claude, noted))
        os.chmod(relay, 0o755)

        times = {"direct": [], "stream": [], "whole": [], "after": [], "span": [],
                 "whole_after": []}
        for n in range(RUNS + 1):
            fresh_home()
            a = first_byte(direct, claude_env, os.path.join(record, "work"), stdin,
                           want=b'"text_delta"')
            b = first_byte(ask + [claude, "--stream", "--user", "s%d" % n, "--", MESSAGE],
                           env, work, b"")
            c = first_byte(ask + [claude, "--user", "w%d" % n, "--", MESSAGE], env, work, b"")
            # time.monotonic(), the relay's clock; only the end matters here.
            started = time.monotonic()
            d = started + first_byte(ask + [relay, "--stream", "--user", "r%d" % n, "--", MESSAGE],
                                     env, work, b"", clock=time.monotonic)
            with open(noted) as f:
                first, result = eval(f.read())
            after, span = d - first, result - first
            e = time.monotonic()
            e += first_byte(ask + [relay, "--user", "e%d" % n, "--", MESSAGE], env, work, b"",
                            clock=time.monotonic)
            with open(noted) as f:
                _, result = eval(f.read())
            whole_after = e - result
            if n == 0:
                continue  # warm-up
            times["direct"].append(a)
            times["stream"].append(b)
            times["whole"].append(c)
            times["after"].append(after)
            times["span"].append(span)
            times["whole_after"].append(whole_after)
            say("round %d: claude %.0f ms, ask --stream %.0f ms, ask %.0f ms; "
                "first delta %.2f ms after claude's, whole reply %.0f ms after that; "
                "ask prints %.2f ms after claude's result"
                % (n, a * 1000, b * 1000, c * 1000, after * 1000, span * 1000,
                   whole_after * 1000))
        ms = {k: statistics.median(v) * 1000 for k, v in times.items()}
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
        print("claude-session %s, claude %s, %d rounds after one warm-up, load average at the "
              "end %s" % (rev, subprocess.run([claude, "--version"], capture_output=True,
                                               text=True).stdout.strip(), RUNS, load))
        print()
        diffs = [(b - a) * 1000 for a, b in zip(times["direct"], times["stream"])]
        print("| command | time to first byte, median of %d | vs claude directly |" % RUNS)
        print("|---|---|---|")
        print("| claude directly, same flags: first `text_delta` event | %.0f ms | 1.00× |"
              % ms["direct"])
        print("| `ask --stream`: first delta | %.0f ms | %.2f× (paired difference: median %+.0f ms, "
              "min %+.0f, max %+.0f) |" % (ms["stream"], ms["stream"] / ms["direct"],
                                          statistics.median(diffs), min(diffs), max(diffs)))
        print("| `ask` without `--stream`: the whole reply | %.0f ms | %.2f× |"
              % (ms["whole"], ms["whole"] / ms["direct"]))
        print()
        print("| within one run | median | min | max |")
        print("|---|---|---|---|")
        for key, what, digits in [
                ("after", "`ask --stream`: claude's first `text_delta` line → ask's first byte", 2),
                ("span", "`ask --stream`: claude's first `text_delta` line → its result line "
                 "(the earliest a whole reply can be printed)", 0),
                ("whole_after", "`ask`: claude's result line → ask's first byte", 2)]:
            v = sorted(t * 1000 for t in times[key])
            print("| %s | %.*f ms | %.*f ms | %.*f ms |"
                  % (what, digits, statistics.median(v), digits, v[0], digits, v[-1]))
    finally:
        if mock is not None:
            mock.kill()
            mock.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
