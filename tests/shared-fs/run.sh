#!/usr/bin/env bash
# The shared-file-system suite: a GlusterFS volume on loopback, mounted
# twice over FUSE (each mount stands for one broker host), and the tool run
# through both at once. See tests/shared-fs/suite.py for what is checked.
#
#   tests/shared-fs/run.sh            # needs root, /dev/fuse and apt (Debian)
#
#   SHARED_FS_BIN=path     the claude-session binary (default: cargo build)
#   SHARED_FS_WRITERS=8    appending processes per mount
#   SHARED_FS_PER_WRITER=100  appends per writer (8 × 2 × 100 = 1,600)
#   SHARED_FS_ROUNDS=2     rounds of the whole tool check (3,200 appends)
#   SHARED_FS_PEOPLE=20000 people in the state dir for the scale check
#   SHARED_FS_TWO_HOST_ROUNDS=50  rounds of one message id through both
#                          mounts, and of a fresh state dir written from both
#   SHARED_FS_ONLY_NEW=1   only those two and the vanished-mount check
#   SHARED_FS_ONLY=part    only one part: primitives, tool, scale or hosts
#   SHARED_FS_RENAME_ROUNDS=30  rounds of each rename probe
#
# It installs glusterfs-server and glusterfs-client when missing, runs
# glusterd with its state, logs, sockets and pid files under a temporary
# folder (nothing in /var/lib/glusterd), creates the volume on this
# machine's hostname (gluster refuses `localhost`), and tears everything
# down on every exit path. Every step that can hang has a timeout. If the
# machine cannot set this up, it FAILS (exit 1) saying why: never a skip.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
say() { printf 'shared-fs: %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

source "$here/volume.sh"
shared_fs_prepare
# The scale check counts the directory entries a command reads with strace.
if ! command -v strace >/dev/null; then
  say "installing strace"
  DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq strace >/dev/null 2>&1 ||
    die "could not install strace with apt-get"
fi

# --- the binary ----------------------------------------------------------------
bin=${SHARED_FS_BIN:-}
if [[ -z $bin ]]; then
  say "building: cargo build --locked"
  (cd "$repo" && cargo build --locked --quiet) || die "cargo build failed"
  bin=${CARGO_TARGET_DIR:-$repo/target}/debug/claude-session
fi
[[ -x $bin ]] || die "no binary at $bin"

# --- glusterd, a volume with default options, two mounts -----------------------
shared_fs_start
volume=csfs$$
shared_fs_volume "$volume"
shared_fs_mount "$volume" m1 # default mount options: what operators use
shared_fs_mount "$volume" m2
shared_fs_mount "$volume" m3 # unmounted by the suite: a mount that vanishes
timeout 10 touch "$work/m1/.ready" && timeout 10 test -e "$work/m2/.ready" ||
  die "a file made through one mount is not seen through the other"
grep " $work/m1 " /proc/mounts | sed 's/^/shared-fs: /' >&2

# --- the suite ---------------------------------------------------------------------
# Every Python step has a timeout too: a hung mount fails the run.
timeout 1500 python3 "$here/suite.py" \
  --m1 "$work/m1" --m2 "$work/m2" --m3 "$work/m3" ${SHARED_FS_ONLY_NEW:+--only-new} ${SHARED_FS_ONLY:+--only "$SHARED_FS_ONLY"} --brick "$work/brick-$volume" \
  --bin "$bin" --fake-claude "$repo/tests/fake-claude" ||
  die "the suite failed (see above)"
say "passed"
