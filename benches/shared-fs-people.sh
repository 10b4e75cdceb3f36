#!/usr/bin/env bash
# One message's cost against the number of people in the state dir (issue
# 27): `context` and `ask` with 20, 5,000, 20,000 and 100,000 people, on a
# GlusterFS volume with default options and on a local disk, for this build
# and (BEFORE=path) an earlier one, in one run; then the cost per person of
# the commands that walk everyone. Prints markdown tables (BENCHMARKS.md,
# "One message with many people"); progress goes to stderr.
#
#   sudo benches/shared-fs-people.sh
#   sudo BEFORE=/tmp/claude-session-old PEOPLE=20,5000,20000,100000 benches/shared-fs-people.sh
#
# The test bed is the shared-FS suite's (tests/shared-fs/volume.sh: glusterd
# under a temp dir, one brick, torn down at exit).
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'shared-fs-people.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

source "$repo/tests/shared-fs/volume.sh"
shared_fs_prepare

say "building: cargo build --release --locked"
(cd "$repo" && cargo build --release --locked --quiet) || die "cargo build failed"
built=${CARGO_TARGET_DIR:-$repo/target}/release/claude-session
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

shared_fs_start
cp "$built" "$work/claude-session"
builds=()
if [[ -n ${BEFORE:-} ]]; then
  cp "$BEFORE" "$work/claude-session-before"
  builds+=(--build before "$work/claude-session-before")
fi
builds+=(--build "$rev" "$work/claude-session")
shared_fs_volume people
shared_fs_mount people d1
mkdir -p "$work/local"
local_fs=$(df --output=fstype "$work/local" | tail -n 1 | tr -d ' ')

say "measuring (several minutes)"
nice timeout 7200 python3 "$repo/benches/shared_fs_people.py" "${builds[@]}" \
  --fake-claude "$repo/tests/fake-claude" \
  --gluster "$work/d1" "$work/brick-people" --local "$work/local" \
  --people "${PEOPLE:-20,5000,20000,100000}" --walkers "${WALKERS:-500,2000}"
printf '\nclaude-session %s (release build); GlusterFS %s, one brick on %s; local disk %s; %s cores.\n' \
  "$rev" "$(glusterfs --version | head -n 1 | awk '{print $2}')" \
  "$(df --output=fstype "$work" | tail -n 1 | tr -d ' ')" "$local_fs" "$(nproc)"
