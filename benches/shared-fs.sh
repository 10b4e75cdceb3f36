#!/usr/bin/env bash
# claude-session on a shared file system against a local disk, in one run:
# append latency (p50, p99), throughput under 16-way contention and the
# time of one compaction, through GlusterFS mounts with default options,
# with strict options, and on a local disk. Prints one markdown table
# (BENCHMARKS.md, "Shared file systems"); progress goes to stderr.
#
#   benches/shared-fs.sh            # needs root, /dev/fuse, apt (Debian)
#   LATENCY=200 PER_WRITER=25 COMPACTIONS=5 benches/shared-fs.sh
#
# Two volumes on loopback, one brick each, set up as tests/shared-fs/run.sh
# does (tests/shared-fs/volume.sh: glusterd under a temp dir, everything
# torn down at exit). "default": the volume's and the mount's defaults.
# "strict": `performance.stat-prefetch off` on the volume and
# `--entry-timeout=0 --attribute-timeout=0 --negative-timeout=0` on both
# mounts, the options that alone made the old code lose nothing. The
# local disk is a folder under the same temp dir (/tmp; the script says
# which file system it is).
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'shared-fs.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

source "$repo/tests/shared-fs/volume.sh"
shared_fs_prepare

say "building: cargo build --release --locked"
(cd "$repo" && cargo build --release --locked --quiet) || die "cargo build failed"
built=${CARGO_TARGET_DIR:-$repo/target}/release/claude-session
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

shared_fs_start
# A copy: a rebuild during the run cannot swap it.
cp "$built" "$work/claude-session"
shared_fs_volume default
shared_fs_volume strict performance.stat-prefetch off
shared_fs_mount default d1
shared_fs_mount default d2
strict=(--entry-timeout=0 --attribute-timeout=0 --negative-timeout=0)
shared_fs_mount strict s1 "${strict[@]}"
shared_fs_mount strict s2 "${strict[@]}"
mkdir -p "$work/local"
local_fs=$(df --output=fstype "$work/local" | tail -n 1 | tr -d ' ')

say "measuring (about a minute per setup)"
timeout 1800 python3 "$repo/benches/shared_fs.py" \
  --bin "$work/claude-session" --fake-claude "$repo/tests/fake-claude" \
  --setup "GlusterFS, default options" "$work/d1/state" "$work/d2/state" \
  --setup "GlusterFS, strict options" "$work/s1/state" "$work/s2/state" \
  --setup "local disk ($local_fs)" "$work/local/state" "$work/local/state"
printf '\nclaude-session %s (release build); GlusterFS %s, one brick on %s, both mounts on this machine; %s cores.\n' \
  "$rev" "$(glusterfs --version | head -n 1 | awk '{print $2}')" \
  "$(df --output=fstype "$work" | tail -n 1 | tr -d ' ')" "$(nproc)"
