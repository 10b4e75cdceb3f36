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

# --- what the machine must have ----------------------------------------------
[[ $(id -u) == 0 ]] || die "must run as root (glusterd and FUSE mounts need it)"
[[ -c /dev/fuse ]] || die "/dev/fuse is missing: this machine cannot mount FUSE"
command -v python3 >/dev/null || die "python3 is needed"
if ! command -v glusterd >/dev/null || ! command -v glusterfs >/dev/null; then
  command -v apt-get >/dev/null || die "glusterfs is not installed and there is no apt-get"
  say "installing glusterfs-server glusterfs-client"
  export DEBIAN_FRONTEND=noninteractive
  timeout 300 apt-get install -y -qq glusterfs-server glusterfs-client >/dev/null 2>&1 ||
    { timeout 300 apt-get update -qq >/dev/null 2>&1 &&
      timeout 300 apt-get install -y -qq glusterfs-server glusterfs-client >/dev/null; } ||
    die "could not install glusterfs-server and glusterfs-client with apt-get"
fi
host=$(hostname)
getent hosts "$host" >/dev/null || die "the hostname $host does not resolve (add it to /etc/hosts)"
if python3 -c 'import socket; socket.create_connection(("127.0.0.1", 24007), 2)' 2>/dev/null; then
  die "port 24007 is taken (a glusterd is already running on this machine?); stop it first"
fi

# --- the binary ----------------------------------------------------------------
bin=${SHARED_FS_BIN:-}
if [[ -z $bin ]]; then
  say "building: cargo build --locked"
  (cd "$repo" && cargo build --locked --quiet) || die "cargo build failed"
  bin=${CARGO_TARGET_DIR:-$repo/target}/debug/claude-session
fi
[[ -x $bin ]] || die "no binary at $bin"

# --- glusterd, a volume, two mounts ----------------------------------------------
work=$(mktemp -d /tmp/claude-session-shared-fs.XXXXXX)
volume=csfs$$
mounts=()
glusterd_pid=
G() { timeout 60 gluster --glusterd-sock="$work/run/glusterd.socket" --log-file="$work/log/cli.log" --mode=script "$@"; }

teardown() {
  local status=$?
  trap - EXIT INT TERM
  set +e
  for m in "${mounts[@]}"; do
    timeout 20 umount "$m" 2>/dev/null || timeout 20 umount -l "$m" 2>/dev/null
  done
  for pidfile in "$work"/mount-*.pid; do
    [[ -f $pidfile ]] && kill -9 "$(cat "$pidfile")" 2>/dev/null
  done
  if [[ -n $glusterd_pid ]]; then
    G volume stop "$volume" force >/dev/null 2>&1
    # The brick process and glusterd, by the pid files they wrote here.
    for pidfile in $(find "$work/run" "$work/lib" -name '*.pid' 2>/dev/null); do
      kill -9 "$(cat "$pidfile")" 2>/dev/null
    done
    kill -9 "$glusterd_pid" 2>/dev/null
  fi
  if [[ $status != 0 && -d $work/log ]]; then
    say "logs of the failed run (last lines):"
    for log in "$work"/log/*.log "$work"/log/bricks/*.log; do
      [[ -f $log ]] || continue
      printf '== %s\n' "$log" >&2
      tail -n 15 "$log" >&2
    done
  fi
  # A mount that would not go away keeps its folder; remove the rest.
  if ! grep -q " $work/" /proc/mounts; then rm -rf "$work"; else say "left $work (still mounted)"; fi
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

mkdir -p "$work"/{lib,run,log,brick,m1,m2}
cp -r /var/lib/glusterd/groups "$work/lib/" 2>/dev/null || true
cat >"$work/glusterd.vol" <<EOF
volume management
    type mgmt/glusterd
    option working-directory $work/lib
    option run-directory $work/run
    option logging-directory $work/log
    option glusterd-sockfile $work/run/glusterd.socket
    option transport-type socket
    option transport.socket.listen-port 24007
    option transport.address-family inet
    option ping-timeout 0
    option event-threads 1
end-volume
EOF
say "starting glusterd (state in $work)"
timeout 30 glusterd -f "$work/glusterd.vol" -p "$work/glusterd.pid" -l "$work/log/glusterd.log" ||
  die "glusterd did not start"
glusterd_pid=$(cat "$work/glusterd.pid")
for _ in $(seq 100); do G volume list >/dev/null 2>&1 && break; sleep 0.2; done
G volume list >/dev/null || die "glusterd does not answer on $work/run/glusterd.socket"

G volume create "$volume" "$host:$work/brick" force >/dev/null || die "gluster volume create failed"
G volume start "$volume" >/dev/null || die "gluster volume start failed"

for m in m1 m2; do
  # Default mount options: what operators use.
  timeout 60 glusterfs --volfile-server="$host" --volfile-id="$volume" \
    --log-file="$work/log/mount-$m.log" --pid-file="$work/mount-$m.pid" "$work/$m" ||
    die "mounting the volume on $work/$m failed"
  mounts+=("$work/$m")
done
for m in m1 m2; do
  for _ in $(seq 100); do mountpoint -q "$work/$m" && break; sleep 0.2; done
  mountpoint -q "$work/$m" || die "$work/$m is not mounted"
done
timeout 10 touch "$work/m1/.ready" && timeout 10 test -e "$work/m2/.ready" ||
  die "a file made through one mount is not seen through the other"
grep " $work/m1 " /proc/mounts | sed 's/^/shared-fs: /' >&2

# --- the suite ---------------------------------------------------------------------
# Every Python step has a timeout too: a hung mount fails the run.
timeout 900 python3 "$here/suite.py" \
  --m1 "$work/m1" --m2 "$work/m2" --brick "$work/brick" \
  --bin "$bin" --fake-claude "$repo/tests/fake-claude" ||
  die "the suite failed (see above)"
say "passed"
