#!/usr/bin/env bash
# `ask` with the real Claude Code CLI against the loopback mock of the
# Messages API (tests/mock-messages-api.py): before and after the safe and
# lean defaults, in one run. Prints one markdown table on stdout.
#
#   benches/real-claude.sh                 # about 4 minutes on 2 cores
#   CLAUDE_VERSION=2.1.332 benches/real-claude.sh   # one pinned release only
#   ASK_PAIRS=20 benches/real-claude.sh    # more timed pairs
#   BASELINE=<rev> benches/real-claude.sh  # the "before" build (default below)
#
# "before" is claude-session built from BASELINE (the last commit before
# the change, in a git worktree under target/, built once and cached);
# "after" is the working tree's release build. Both run each pinned
# claude release in turn (the oldest supported and the newest tested,
# src/claude/mod.rs; installed under target/claude-code/ by the test
# suite's own install when missing: benches/claude-cli.sh) from the same
# broker folder (a CLAUDE.md, a .env), with the same memory (profile,
# summary, 10 recent messages, fresh for each release), against the same
# mock. The table has one group of rows per release. Figures:
# API requests per ask and their bytes (from the mock's log), the median
# wall time of ASK_PAIRS alternating runs and its ratio, and the peak RSS
# of one ask (GNU time: claude-session and the claude it waited for).
set -euo pipefail
export LC_ALL=C

ASK_PAIRS=${ASK_PAIRS:-10}
BASELINE=${BASELINE:-8a96b6b}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf '%s\n' "$*" >&2; }
die() { say "real-claude.sh: $*"; exit 1; }

command -v python3 >/dev/null || die "python3 is needed for the mock Messages API"
command -v npm >/dev/null || die "npm is needed to install the pinned Claude Code CLIs (apt-get install nodejs npm)"
[[ -x /usr/bin/time ]] || die "GNU time (/usr/bin/time) is needed for peak RSS (apt-get install time)"

target=${CARGO_TARGET_DIR:-$repo/target}
# shellcheck source=benches/claude-cli.sh
source "$repo/benches/claude-cli.sh"
if [[ -n ${CLAUDE_VERSION:-} ]]; then
  tested_versions | grep -qx "$CLAUDE_VERSION" ||
    die "CLAUDE_VERSION=$CLAUDE_VERSION is not a pinned release ($(tested_versions | tr '\n' ' '))"
  versions=("$CLAUDE_VERSION")
else
  mapfile -t versions < <(tested_versions)
fi
declare -A claude_of
for version in "${versions[@]}"; do claude_of[$version]=$(claude_bin "$version"); done

say "building: cargo build --release --locked (after)"
(cd "$repo" && cargo build --release --locked --quiet)
after_src=$target/release/claude-session
base_dir=$target/bench-baseline
if [[ ! -x $base_dir/bin-$BASELINE ]]; then
  say "building the baseline $BASELINE (once; cached in $base_dir)"
  rm -rf "$base_dir/src"
  mkdir -p "$base_dir"
  git -C "$repo" worktree add --detach -f "$base_dir/src" "$BASELINE" >/dev/null 2>&1
  (cd "$base_dir/src" && CARGO_TARGET_DIR=$base_dir/target cargo build --release --locked --quiet)
  cp "$base_dir/target/release/claude-session" "$base_dir/bin-$BASELINE"
  git -C "$repo" worktree remove --force "$base_dir/src" >/dev/null 2>&1 || true
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/claude-session-real-bench.XXXXXX")
mock_pid=
cleanup() { [[ -n $mock_pid ]] && kill "$mock_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cp "$after_src" "$work/after"
cp "$base_dir/bin-$BASELINE" "$work/before"

python3 "$repo/tests/mock-messages-api.py" "$work/mock" &
mock_pid=$!
for _ in $(seq 100); do [[ -f $work/mock/port ]] && break; sleep 0.05; done
[[ -f $work/mock/port ]] || die "the mock did not start"
url=http://127.0.0.1:$(cat "$work/mock/port")
printf '{"text": "Sure, you were planning a family trip to Paris in May."}' >"$work/mock/default.json"

# A broker's folder, and one state dir per variant with the same memory
# (made afresh for each release: every ask adds two lines to the log).
broker=$work/broker
mkdir -p "$broker" "$work/home"
printf '# Broker notes\nDeploy with make deploy.\n' >"$broker/CLAUDE.md"
printf 'SLACK_BOT_TOKEN=xoxb-bench\n' >"$broker/.env"
fresh_state() {
  local variant sd i role
  for variant in before after; do
    sd=$work/state-$variant
    rm -rf "$sd"
    mkdir -p "$sd/sessions/ltm/users" "$sd/sessions/stm/U1"
    chmod -R go-rwx "$sd"
    printf '{"compacting":{"enabled":false},"durability":{"fsync":false}}\n' >"$sd/sessions/config.json"
    printf -- '---\nuser_id: U1\ndisplay_name: Ken\n---\nName: Ken. Language: English.\n' >"$sd/sessions/ltm/users/U1.md"
    printf -- '---\nuser_id: U1\n---\nKen is planning a family trip to Paris.\n' >"$sd/sessions/stm/U1/summary.md"
    for i in $(seq 10); do
      role=user; ((i % 2)) || role=assistant
      printf '{"ts":"2026-11-0%dT10:00:00.000Z","role":"%s","text":"message %d about the Paris trip and the hotel"}\n' \
        $((i % 9 + 1)) "$role" "$i" >>"$sd/sessions/stm/U1/messages.jsonl"
    done
  done
}

prompt="Can you remind me what we discussed about the trip to Paris with my family?"
ask() { # ask VARIANT
  (cd "$broker" && env -i PATH="$PATH" HOME="$work/home" LANG=C.UTF-8 \
    ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-bench SLACK_BOT_TOKEN=xoxb-bench \
    CLAUDE_BIN="$claude" "$work/$1" --state-dir "$work/state-$1" ask --user U1 -- "$prompt")
}
ask_before() { ask before; }
ask_after() { ask after; }

requests() { [[ -f $work/mock/requests.jsonl ]] && wc -l <"$work/mock/requests.jsonl" || echo 0; }
req_bytes() { [[ -f $work/mock/requests.jsonl ]] && python3 -c '
import json, sys
print(sum(json.loads(l)["bytes"] for l in open(sys.argv[1])))' "$work/mock/requests.jsonl" || echo 0; }

rev=$(git -C "$repo" rev-parse --short HEAD)
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.0f", m / 1000 }'; }
rss() { /usr/bin/time -f %M -o "$work/.rss" bash -c "$(declare -f ask); work=$work broker=$broker url=$url claude=$claude prompt='$prompt'; ask $1" >/dev/null 2>&1; tail -n 1 "$work/.rss"; }
printf '| measure (mock API; after = %s, before = %s) | claude | before | after | after / before |\n' "$rev" "$BASELINE"
printf '|---|---|---|---|---|\n'
for version in "${versions[@]}"; do
  claude=${claude_of[$version]}
  fresh_state
  say "claude $version: requests and bytes"
  # Requests and bytes: N asks of each, counted on the mock (a title request
  # may arrive after claude printed its answer: wait a moment before reading).
  count_asks=5
  declare -A reqs bytes
  for variant in before after; do
    r0=$(requests); b0=$(req_bytes)
    for _ in $(seq $count_asks); do ask "$variant" >/dev/null; done
    sleep 1
    reqs[$variant]=$(awk -v a="$(requests)" -v b="$r0" -v n=$count_asks 'BEGIN { printf "%.1f", (a - b) / n }')
    bytes[$variant]=$(awk -v a="$(req_bytes)" -v b="$b0" -v n=$count_asks 'BEGIN { printf "%.0f", (a - b) / n }')
    # Tool definitions and bytes of the largest request of this variant (the
    # main one; a title request is small).
    read -r "tools_$variant" "main_$variant" < <(python3 -c '
import json, glob, sys
names = sorted(glob.glob(sys.argv[1] + "/requests/*.json"))[int(sys.argv[2]):]
main = max(names, key=lambda n: len(open(n, "rb").read()))
body = open(main, "rb").read()
print(len(json.loads(body).get("tools", [])), len(body))' "$work/mock" "$r0")
  done

  say "claude $version: timing $ASK_PAIRS alternating pairs"
  declare -a tb=() ta=()
  for ((i = 0; i < ASK_PAIRS; i++)); do
    s=${EPOCHREALTIME/./}; ask_before >/dev/null; e=${EPOCHREALTIME/./}; tb+=($((e - s)))
    s=${EPOCHREALTIME/./}; ask_after >/dev/null; e=${EPOCHREALTIME/./}; ta+=($((e - s)))
  done
  # Paired ratio: the median of after/before over the pairs.
  paired=$(for ((i = 0; i < ASK_PAIRS; i++)); do awk -v a="${ta[i]}" -v b="${tb[i]}" 'BEGIN { printf "%.4f\n", a / b }'; done |
    sort -n | awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f", m }')
  rss_before=$(rss before)
  rss_after=$(rss after)

  printf '| API requests per `ask` | %s | %s | %s | |\n' "$version" "${reqs[before]}" "${reqs[after]}"
  printf '| request bytes per `ask` (sum of its requests) | %s | %s | %s | %s× |\n' "$version" "${bytes[before]}" "${bytes[after]}" \
    "$(awk -v a="${bytes[after]}" -v b="${bytes[before]}" 'BEGIN { printf "%.3f", a / b }')"
  printf '| tool definitions in the main request | %s | %s | %s | |\n' "$version" "$tools_before" "$tools_after"
  printf '| bytes of the main request | %s | %s | %s | %s× |\n' "$version" "$main_before" "$main_after" \
    "$(awk -v a="$main_after" -v b="$main_before" 'BEGIN { printf "%.3f", a / b }')"
  printf '| wall time of `ask`, median of %d pairs | %s | %s ms | %s ms | %s (paired median) |\n' "$ASK_PAIRS" "$version" "$(median "${tb[@]}")" "$(median "${ta[@]}")" "$paired"
  printf '| peak RSS of one `ask` (with claude) | %s | %.1f MB | %.1f MB | %s× |\n' "$version" \
    "$(awk -v k="$rss_before" 'BEGIN { print k / 1024 }')" "$(awk -v k="$rss_after" 'BEGIN { print k / 1024 }')" \
    "$(awk -v a="$rss_after" -v b="$rss_before" 'BEGIN { printf "%.2f", a / b }')"
done
say "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
