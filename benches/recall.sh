#!/usr/bin/env bash
# Recall (`claude-session mcp`, `ask.recall`): what the MCP server costs.
# Prints one markdown table on stdout; progress goes to stderr.
#
#   benches/recall.sh                 # about 3 minutes on 2 cores
#   RUNS=30 ASK_RUNS=20 benches/recall.sh   # ASK_RUNS: pairs of asks (default 15)
#   cargo build --release --manifest-path benches/rmcp-probe/Cargo.toml
#   RMCP_PROBE=benches/rmcp-probe/target/release/rmcp-probe benches/recall.sh
#   BIN=/path/to/release/claude-session benches/recall.sh   # no build
#
# 1. Start-up: `mcp` answering initialize + tools/list and exiting at EOF
#    (what claude does with it before the first API request), against the
#    same binary's `--version` (process start alone) and, when RMCP_PROBE
#    names one, a minimal rmcp (tokio) stdio server answering the same.
#    The state dir holds 10,000 other people besides the one searched.
# 2. A search round trip: start-up + one search_memory over a person with
#    60 archived days (3,000 messages) + 20 in the log, against
#    `zcat archives | grep -i` of the same files.
# 3. `ask` with the real Claude Code CLI (the oldest pinned release, or
#    CLAUDE_VERSION=<the other>; under target/claude-code, installed as
#    the test suite does when missing)
#    and the mock Messages API answering text at once (no tool call: the
#    model's own extra turn is excluded): ask.recall on against off.
#
# 1-2 are timed by hyperfine (warm-up runs first; median wall time, mean
# CPU time), 3 by pairs of asks run alternately (wall time only).
set -euo pipefail
export LC_ALL=C

RUNS=${RUNS:-30}
ASK_RUNS=${ASK_RUNS:-15}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf '%s\n' "$*" >&2; }
die() { say "recall.sh: $*"; exit 1; }
command -v hyperfine >/dev/null || die "hyperfine is needed (apt-get install hyperfine)"
command -v python3 >/dev/null || die "python3 is needed"

target=${CARGO_TARGET_DIR:-$repo/target}
if [[ -n ${BIN:-} ]]; then
  bin=$BIN   # a release binary built before (skips the build)
else
  say "building: cargo build --release --locked"
  (cd "$repo" && cargo build --release --locked --quiet)
  bin=$target/release/claude-session
fi
# shellcheck source=benches/claude-cli.sh
source "$repo/benches/claude-cli.sh"
# The oldest supported release unless CLAUDE_VERSION names another pinned one.
version=${CLAUDE_VERSION:-$(tested_versions | head -n 1)}
tested_versions | grep -qx "$version" || die "CLAUDE_VERSION=$version is not a pinned release ($(tested_versions | tr '\n' ' '))"
claude=$(claude_bin "$version")

work=$(mktemp -d "${TMPDIR:-/tmp}/claude-session-recall-bench.XXXXXX")
mock_pid=
cleanup() { [[ -n $mock_pid ]] && kill "$mock_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- data: U1 with 60 archived days, a log, summaries, a profile ------------------
say "generating data"
python3 - "$work/state/sessions" <<'EOF'
import gzip, json, os, sys, datetime
root = sys.argv[1]
os.makedirs(f"{root}/stm/U1", exist_ok=True)
os.makedirs(f"{root}/archive/U1", exist_ok=True)
os.makedirs(f"{root}/summaries/U1/daily", exist_ok=True)
os.makedirs(f"{root}/ltm/users", exist_ok=True)
words = "we talked about the train schedule and the weather in Osaka and my TOEIC study plan".split()
day0 = datetime.date(2026, 1, 1)
for d in range(60):
    day = day0 + datetime.timedelta(days=d)
    lines = []
    for i in range(50):
        text = " ".join(words[(i + j) % len(words)] for j in range(12))
        if d == 17 and i == 23:
            text += " and the Hotel Negresco"
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(json.dumps({"ts": f"{day}T{8 + i // 6:02d}:{i % 60:02d}:00Z", "role": role, "text": text, "channel": "slack"}))
    with gzip.open(f"{root}/archive/U1/messages-{day}.jsonl.gz", "wt") as f:
        f.write("\n".join(lines) + "\n")
    with open(f"{root}/summaries/U1/daily/{day}.md", "w") as f:
        f.write(f"---\nuser_id: U1\ndate: {day}\n---\n\nKen talked about trains and the TOEIC.\n")
with open(f"{root}/stm/U1/messages.jsonl", "w") as f:
    for i in range(20):
        f.write(json.dumps({"ts": f"2026-03-02T10:{i:02d}:00Z", "role": "user" if i % 2 == 0 else "assistant", "text": "recent chat line"}) + "\n")
with open(f"{root}/ltm/users/U1.md", "w") as f:
    f.write("---\nuser_id: U1\n---\n\n# Profile\n\n- Name: Ken\n- Language: English\n")
# 10,000 other people: start-up must not depend on how many there are.
for i in range(10000):
    os.makedirs(f"{root}/stm/P{i:05d}", exist_ok=True)
    with open(f"{root}/stm/P{i:05d}/messages.jsonl", "w") as f:
        f.write(json.dumps({"ts": "2026-03-02T10:00:00Z", "role": "user", "text": "hi"}) + "\n")
with open(f"{root}/config.json", "w") as f:
    f.write('{"compacting": {"threshold": 100000}}\n')
EOF
chmod -R go-rwx "$work/state"
sd=$work/state

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}'
notified='{"jsonrpc":"2.0","method":"notifications/initialized"}'
list='{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
search='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"negresco"}}}'
printf '%s\n%s\n%s\n' "$init" "$notified" "$list" >"$work/handshake.jsonl"
printf '%s\n%s\n%s\n%s\n' "$init" "$notified" "$list" "$search" >"$work/search.jsonl"
"$bin" --state-dir "$sd" mcp --user U1 <"$work/search.jsonl" | tail -1 | grep -q 'Hotel Negresco' ||
  die "the search found nothing"

# "wall/cpu" per command: the median wall time and the mean user+system
# CPU time, in ms (on a loaded machine wall time is mostly waiting for a
# CPU; CPU time says what the process itself costs).
median_ms() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.1f/%.1f" % (x["median"]*1000, (x["user"]+x["system"])*1000) for x in r))' "$1"; }

say "1-2/3 start-up and a search round trip"
cmds=(
  "$bin --version"
  "$bin --state-dir $sd mcp --user U1 <$work/handshake.jsonl"
  "$bin --state-dir $sd mcp --user U1 <$work/search.jsonl"
  "zcat $sd/sessions/archive/U1/*.gz $sd/sessions/stm/U1/messages.jsonl | grep -i negresco"
)
if [[ -n ${RMCP_PROBE:-} ]]; then
  cmds+=("$RMCP_PROBE <$work/handshake.jsonl")
fi
# Through a shell (for the redirections); hyperfine subtracts its start-up.
hyperfine --style none --warmup 3 --runs "$RUNS" --export-json "$work/start.json" "${cmds[@]}" >/dev/null
read -r t_version t_handshake t_search t_zgrep t_rmcp < <(median_ms "$work/start.json"; echo)

# --- 3. ask, recall on vs off, the real claude, the mock ----------------------------
say "3/3 ask with the real claude, recall off vs on"
python3 "$repo/tests/mock-messages-api.py" "$work/mock" &
mock_pid=$!
for _ in $(seq 100); do [[ -f $work/mock/port ]] && break; sleep 0.05; done
[[ -f $work/mock/port ]] || die "the mock did not start"
printf '{"text": "You stayed at the Hotel Negresco."}' >"$work/mock/default.json"
cp -r "$sd" "$work/state-on"
printf '{"compacting": {"threshold": 100000}, "ask": {"recall": true}}\n' >"$work/state-on/sessions/config.json"
mkdir -p "$work/home"
port=$(cat "$work/mock/port")
# One ask, its wall time in ms ($EPOCHREALTIME: no timing process inside).
ask_ms() {
  local t0=$EPOCHREALTIME
  env -i PATH="$PATH" HOME="$work/home" ANTHROPIC_API_KEY=sk-ant-bench \
    ANTHROPIC_BASE_URL="http://127.0.0.1:$port" CLAUDE_BIN="$claude" \
    "$bin" --state-dir "$1" -q ask --user U1 --no-compact -- "which hotel was it?" >/dev/null
  echo $(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))
}
ask_ms "$sd" >/dev/null; ask_ms "$work/state-on" >/dev/null
# Pairs run alternately (off, on, off, …): the load of a shared machine
# drifts over minutes, a pair sees about the same.
: >"$work/pairs"
for _ in $(seq "$ASK_RUNS"); do
  printf '%s %s\n' "$(ask_ms "$sd")" "$(ask_ms "$work/state-on")" >>"$work/pairs"
done
read -r t_off t_on t_pair < <(python3 -c '
import statistics, sys
p = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
print(*(round(statistics.median(x)) for x in ([a for a, _ in p], [b for _, b in p], [b - a for a, b in p])))
' "$work/pairs")
# Requests and their bytes with recall on (the last request of the run).
bytes_on=$(python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; m=[x for x in l if x["path"].startswith("/v1/messages") and "count_tokens" not in x["path"]]; print(m[-1]["bytes"])' "$work/mock/requests.jsonl")

# On "wall/cpu" pairs: wall ratio (cpu ratio), wall difference (cpu difference).
ratio() { python3 -c "import sys; a=[float(x) for x in sys.argv[1].split('/')]; b=[float(x) for x in sys.argv[2].split('/')]; print('%.2f× (CPU %.2f×)' % (a[0]/b[0], a[1]/b[1]))" "$1" "$2"; }
delta() { python3 -c "import sys; a=[float(x) for x in sys.argv[1].split('/')]; b=[float(x) for x in sys.argv[2].split('/')]; print('%+.1f ms (CPU %+.1f ms)' % (a[0]-b[0], a[1]-b[1]))" "$1" "$2"; }

printf '| what | wall / CPU ms | baseline | wall / CPU ms | ratio / difference |\n|---|---:|---|---:|---:|\n'
printf '| `mcp` start-up: initialize + tools/list, exit at EOF | %s | `claude-session --version` (process start) | %s | %s |\n' \
  "$t_handshake" "$t_version" "$(delta "$t_handshake" "$t_version")"
if [[ -n ${t_rmcp:-} ]]; then
  printf '| same | %s | a minimal rmcp (tokio) stdio server, one tool | %s | %s |\n' \
    "$t_handshake" "$t_rmcp" "$(ratio "$t_handshake" "$t_rmcp")"
fi
printf '| start-up + one `search_memory`, 60 archived days (3,000 messages) | %s | `zcat … \| grep -i` of the same files | %s | %s |\n' \
  "$t_search" "$t_zgrep" "$(ratio "$t_search" "$t_zgrep")"
printf '| `ask`, real claude + mock, recall on (no tool call), median of %s pairs | %s | recall off | %s | %+d ms (paired median) |\n' \
  "$ASK_RUNS" "$t_on" "$t_off" "$t_pair"
printf '\nRequest body with recall on: %s bytes. claude-session %s, %s CPUs, load average %s at the end.\n' \
  "$bytes_on" "$(git -C "$repo" rev-parse --short HEAD)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
