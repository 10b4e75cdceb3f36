#!/usr/bin/env bash
# `session search` against `rg -z -i -F` and `zgrep -i -F` on the same files
# (see BENCHMARKS.md, "session search").
#
#   benches/search.sh                  # about 5 minutes on 2 cores
#   RUNS=5 benches/search.sh           # more timed rounds (default 2)
#   SIZE_MB=256 benches/search.sh      # a smaller corpus (default 1024 MB)
#   BENCH_DIR=/mnt/disk benches/search.sh
#
# Generates a state dir with SIZE_MB of uncompressed message lines in gzip
# archives (400 owners: 360 people and 40 group conversations, 10 days
# each) plus short-term logs and daily summaries, in a temporary folder on a
# real disk (never in the repo; removed at exit). The word searched for,
# "refund", is in about one line in 2,000. Checks that all three report the
# same number of matching lines, runs one warm-up round (the page cache is
# then warm), then RUNS rounds; a round runs each command once, in turn, so
# load from other work on the machine falls on all of them alike. GNU time
# gives each run's wall time, CPU time (user + system, children included)
# and peak RSS (of the largest process: rg's or zgrep's own, not the gzip
# children's). Prints a markdown table: median, min and max wall time, the
# ratio of medians to rg, median CPU time, the highest peak RSS of any run,
# and the load average (1 minute) before and after.
#
# Needs: bash, python3, cargo, rg, zgrep, GNU time. When one is missing and
# this runs as root on Debian, it is installed with apt-get.
set -euo pipefail
export LC_ALL=C

RUNS=${RUNS:-2}
SIZE_MB=${SIZE_MB:-1024}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf '%s\n' "$*" >&2; }
die() { say "search.sh: $*"; exit 1; }

need() { # command, debian package
  command -v "$1" >/dev/null && return
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing $2 (apt-get install $2)"
    apt-get install -y -qq "$2" >/dev/null 2>&1 || die "could not install $2"
  else
    die "$1 is needed (Debian package $2)"
  fi
}
need python3 python3
need rg ripgrep
need zgrep gzip
[[ -x /usr/bin/time ]] || need /usr/bin/time time

say "building: cargo build --release --locked"
(cd "$repo" && cargo build --release --locked --quiet)
bin=${CARGO_TARGET_DIR:-$repo/target}/release/claude-session
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

pick_dir() {
  for d in ${BENCH_DIR:-} ${TMPDIR:-} /tmp /var/tmp "$HOME"; do
    [[ -d $d && -w $d ]] || continue
    [[ $(stat -f -c %T "$d") == tmpfs ]] && continue
    case $(cd "$d" && pwd)/ in "$repo"/*) continue ;; esac
    echo "$d"; return
  done
  die "no writable folder on a real disk; set BENCH_DIR"
}
work=$(mktemp -d "$(pick_dir)/claude-session-search-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$bin" "$work/claude-session"
bin=$work/claude-session
state=$work/state

say "generating ${SIZE_MB} MB of messages in $state"
python3 - "$state" "$SIZE_MB" <<'PY'
import gzip, json, os, random, sys
from multiprocessing import Pool

state, size_mb = sys.argv[1], int(sys.argv[2])
sessions = os.path.join(state, "sessions")
rng = random.Random(16)
words = ("the a to and of I you it is for on my can with this that what how when "
         "please thanks order account invoice delivery week exam study plan english "
         "toeic score lesson grammar practice tomorrow today meeting price help issue "
         "ticket shipping return password login payment card bank message call later").split()
ja = ["今日は", "ありがとう", "明日", "勉強", "試験"]
def text():
    n = rng.randint(4, 40)
    t = " ".join(rng.choice(words) for _ in range(n))
    if rng.random() < 0.05:
        t += " " + rng.choice(ja)
    if rng.random() < 0.0005:
        t += " I want a Refund please"
    if rng.random() < 0.03:
        t += "\n- " + " ".join(rng.choice(words) for _ in range(8))
    return t
pool = [json.dumps(text(), ensure_ascii=False) for _ in range(5_000)]
# The word only in the pool's texts: count them exactly later with rg.
owners = [f"U{i:05d}" for i in range(360)] + [f"G{i:03d}" for i in range(40)]
days = [f"2026-03-{d:02d}" for d in range(1, 11)]
per_file = size_mb * 1024 * 1024 // (len(owners) * len(days))

def build(job):
    owner, seed = job
    r = random.Random(seed)
    group = owner.startswith("G")
    arch = os.path.join(sessions, "archive", owner)
    os.makedirs(arch, exist_ok=True)
    for day in days:
        out, size, i = [], 0, 0
        while size < per_file:
            s = i * 17 % 86400
            ts = f"{day}T{s//3600:02d}:{s//60%60:02d}:{s%60:02d}.000Z"
            role = "assistant" if i % 2 else "user"
            extra = ""
            if group and role == "user":
                u = r.randrange(360)
                extra = f',"userId":"U{u:05d}","userName":"Person {u}"'
            if role == "assistant":
                extra += ',"costUsd":0.0123,"usage":{"input_tokens":812,"output_tokens":95}'
            line = (f'{{"ts":"{ts}","role":"{role}","text":{pool[r.randrange(len(pool))]},'
                    f'"msgId":"{owner}-{day}-{i}","channel":"slack"{extra}}}\n')
            out.append(line)
            size += len(line)
            i += 1
        data = "".join(out).encode()
        with open(os.path.join(arch, f"messages-{day}.jsonl.gz"), "wb") as f:
            f.write(gzip.compress(data, 6))
    stm = os.path.join(sessions, "stm", owner)
    os.makedirs(stm, exist_ok=True)
    with open(os.path.join(stm, "messages.jsonl"), "w") as f:
        for i in range(20):
            f.write(f'{{"ts":"2026-03-11T10:{i:02d}:00.000Z","role":"user","text":{pool[r.randrange(len(pool))]}}}\n')
    daily = os.path.join(sessions, "summaries", owner, "daily")
    os.makedirs(daily, exist_ok=True)
    with open(os.path.join(daily, "2026-03-10.md"), "w") as f:
        f.write(f"---\nuser_id: {owner}\ndate: 2026-03-10\n---\n\n{json.loads(pool[r.randrange(len(pool))])}\n")
    if group:
        for u in range(0, 360, 40):
            m = os.path.join(sessions, "memberships", f"U{u:05d}")
            os.makedirs(m, exist_ok=True)
            open(os.path.join(m, owner), "w").close()

with Pool(2) as p:
    p.map(build, [(o, i) for i, o in enumerate(owners)])
PY
sessions=$state/sessions
raw=$(find "$sessions" -name '*.gz' -print0 | xargs -0 cat | gzip -dc | wc -c)
packed=$(find "$sessions" -name '*.gz' -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
files=$(find "$sessions" -type f | wc -l)
say "corpus: $((raw / 1048576)) MB uncompressed in $((packed / 1048576)) MB of gzip; $files files"

ours="$bin --state-dir $state session search refund --limit 0"
ours_json="$bin --state-dir $state --json session search refund --limit 0"
rg_cmd="rg -z -i -F refund $sessions"
zgrep_cmd="find $sessions -type f -print0 | xargs -0 zgrep -i -F refund"

count_ours=$($ours_json | wc -l)
count_rg=$(rg -z -i -F -c --no-filename refund "$sessions" | awk '{s+=$1} END {print s}')
count_zgrep=$(bash -c "$zgrep_cmd" | wc -l)
say "matching lines: ours $count_ours, rg $count_rg, zgrep $count_zgrep"
[[ $count_ours == "$count_rg" && $count_rg == "$count_zgrep" ]] || say "WARNING: the counts differ"

load() { cut -d' ' -f1 /proc/loadavg; }
names=(ours ours-json rg zgrep)
cmds=("$ours" "$ours_json" "$rg_cmd" "$zgrep_cmd")
load_before=$(load)
say "one warm-up round, then $RUNS timed rounds (load average $load_before)"
: >"$work/runs.txt"
for round in $(seq 0 "$RUNS"); do
  for i in "${!names[@]}"; do
    # wall seconds, CPU seconds (user + system), peak RSS in KB
    m=$(/usr/bin/time -f '%e %U %S %M' bash -c "${cmds[$i]} > /dev/null" 2>&1 >/dev/null | tail -1)
    say "  round $round: ${names[$i]} $m"
    if ((round > 0)); then echo "${names[$i]} $m" >>"$work/runs.txt"; fi
  done
done
load_after=$(load)

python3 - "$work/runs.txt" "$raw" "$packed" "$files" "$rev" "$count_ours" "$load_before" "$load_after" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, wall, user, system, rss = line.split()
    runs.setdefault(name, []).append((float(wall), float(user) + float(system), int(rss)))
raw, packed, files, rev, hits = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
load_before, load_after = sys.argv[7], sys.argv[8]
median = lambda k, i: statistics.median(r[i] for r in runs[k])
rg = median("rg", 0)
print(f"Corpus: {raw/2**20:.0f} MB of message lines in {packed/2**20:.0f} MB of gzip, {files} files; "
      f"{hits} matching lines; claude-session {rev}; {len(runs['rg'])} rounds; "
      f"load average {load_before} before, {load_after} after.\n")
print("| command | median | min | max | × rg | CPU | peak RSS |")
print("|---|---|---|---|---|---|---|")
names = {"ours": "`session search refund --limit 0`", "ours-json": "`--json session search refund --limit 0`",
         "rg": "`rg -z -i -F refund`", "zgrep": "`zgrep -i -F refund` (all files)"}
for k in ["ours", "ours-json", "rg", "zgrep"]:
    walls = [r[0] for r in runs[k]]
    print(f"| {names[k]} | {median(k, 0):.2f} s | {min(walls):.2f} s | {max(walls):.2f} s | "
          f"{median(k, 0)/rg:.2f} | {median(k, 1):.2f} s | {max(r[2] for r in runs[k])/1024:.1f} MB |")
PY
