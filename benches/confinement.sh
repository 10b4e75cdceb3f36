#!/usr/bin/env bash
# What Landlock around claude (ask.confinement) adds to an ask: pairs of
# asks answered by the fake claude, confined and not, run alternately in
# one run so the machine's load falls on both alike. Prints a markdown
# table on stdout; progress on stderr.
#
#   benches/confinement.sh                 # about a minute on 2 cores
#   RUNS=400 benches/confinement.sh
#   BIN=/path/to/release/claude-session benches/confinement.sh   # no build
set -euo pipefail
export LC_ALL=C

RUNS=${RUNS:-200}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf '%s\n' "$*" >&2; }
die() { say "confinement.sh: $*"; exit 1; }

if [[ -n ${BIN:-} ]]; then
  bin=$BIN
else
  say "building: cargo build --release --locked"
  cargo build --release --locked --quiet --manifest-path "$repo/Cargo.toml"
  bin=${CARGO_TARGET_DIR:-$repo/target}/release/claude-session
fi
fake=$repo/tests/fake-claude
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for mode in best-effort off; do
  "$bin" --state-dir "$work/$mode" init >/dev/null 2>&1 || mkdir -p "$work/$mode/sessions"
  printf '{"ask": {"confinement": "%s"}, "compacting": {"threshold": 100000}}\n' "$mode" \
    >"$work/$mode/sessions/config.json"
  for i in $(seq 1 20); do
    printf 'message %s about the TOEIC\n' "$i" |
      "$bin" --state-dir "$work/$mode" append --user U1 >/dev/null
  done
done
support=$("$bin" --state-dir "$work/best-effort" doctor --json 2>/dev/null |
  python3 -c 'import json,sys; print(next(c["detail"] for c in json.load(sys.stdin)["checks"] if c["name"] == "confinement"))' ||
  true)

ask() {
  printf 'What did I say about the TOEIC?' |
    FAKE_CLAUDE_REPLY=ok "$bin" --state-dir "$work/$1" -q ask --user U1 --claude-bin "$fake" >/dev/null
}
declare -a on=() off=()
ask best-effort; ask off
say "timing $RUNS pairs"
time_on() { s=${EPOCHREALTIME/./}; ask best-effort; e=${EPOCHREALTIME/./}; on+=($((e - s))); }
time_off() { s=${EPOCHREALTIME/./}; ask off; e=${EPOCHREALTIME/./}; off+=($((e - s))); }
# Which goes first changes every pair: the second of a pair runs on a
# machine the first just warmed.
for ((i = 0; i < RUNS; i++)); do
  if ((i % 2)); then time_off; time_on; else time_on; time_off; fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f", m / 1000 }'; }
m_on=$(median "${on[@]}")
m_off=$(median "${off[@]}")
added=$(awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "%.3f", a - b }')
ratio=$(awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "%.3f", a / b }')

printf '| `ask`, fake claude | confined (`best-effort`) | `off` | added | ratio | target |\n'
printf '|---|---|---|---|---|---|\n'
printf '| median of %s pairs | %s ms | %s ms | **%s ms** | %s× | < 1 ms added: %s |\n' \
  "$RUNS" "$m_on" "$m_off" "$added" "$ratio" \
  "$(awk -v a="$added" 'BEGIN { print (a < 1 ? "met" : "MISSED") }')"
printf '\nconfinement: %s. %s CPUs, load average %s at the end.\n' \
  "${support:-unknown}" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
