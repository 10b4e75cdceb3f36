# Sourced by tests/shared-fs/run.sh and benches/shared-fs.sh: a GlusterFS
# test bed on loopback, everything under one temporary folder.
#
#   shared_fs_prepare                    root, /dev/fuse, packages, hostname
#   shared_fs_start                      glusterd under $work (sets the EXIT trap)
#   shared_fs_volume NAME [KEY VALUE]... create (on this host) and start a volume
#   shared_fs_mount NAME DIR [OPTION]... mount it on $work/DIR with glusterfs
#
# glusterd's working directory, run directory (sockets, pid files) and logs
# live under $work, not /var/lib/glusterd. Volumes are created on this
# machine's hostname: gluster refuses `localhost`. The EXIT trap unmounts,
# kills what was started here (by the pid files under $work) and removes
# $work, on every exit path; every step that can hang has a timeout. The
# caller defines `say` and `die`.

work=
host=
mounts=()
volumes=()
glusterd_pid=

shared_fs_prepare() {
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
}

G() {
  timeout 60 gluster --glusterd-sock="$work/run/glusterd.socket" \
    --log-file="$work/log/cli.log" --mode=script "$@"
}

shared_fs_teardown() {
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
    for v in "${volumes[@]}"; do G volume stop "$v" force >/dev/null 2>&1; done
    # The brick processes and glusterd, by the pid files they wrote here.
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
  if [[ -n $work ]]; then
    if grep -q " $work/" /proc/mounts; then say "left $work (still mounted)"; else rm -rf "$work"; fi
  fi
  exit "$status"
}

shared_fs_start() {
  work=$(mktemp -d /tmp/claude-session-shared-fs.XXXXXX)
  trap shared_fs_teardown EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$work"/{lib,run,log}
  cp -r /var/lib/glusterd/groups "$work/lib/" 2>/dev/null || true
  cat >"$work/glusterd.vol" <<VOL
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
VOL
  say "starting glusterd (state in $work)"
  timeout 30 glusterd -f "$work/glusterd.vol" -p "$work/glusterd.pid" -l "$work/log/glusterd.log" ||
    die "glusterd did not start"
  glusterd_pid=$(cat "$work/glusterd.pid")
  for _ in $(seq 100); do G volume list >/dev/null 2>&1 && break; sleep 0.2; done
  G volume list >/dev/null || die "glusterd does not answer on $work/run/glusterd.socket"
}

shared_fs_volume() {
  local name=$1
  shift
  mkdir -p "$work/brick-$name"
  G volume create "$name" "$host:$work/brick-$name" force >/dev/null ||
    die "gluster volume create $name failed"
  volumes+=("$name")
  while [[ $# -gt 1 ]]; do
    G volume set "$name" "$1" "$2" >/dev/null || die "gluster volume set $name $1 $2 failed"
    shift 2
  done
  G volume start "$name" >/dev/null || die "gluster volume start $name failed"
}

shared_fs_mount() {
  local name=$1 dir=$2
  shift 2
  mkdir -p "$work/$dir"
  timeout 60 glusterfs --volfile-server="$host" --volfile-id="$name" "$@" \
    --log-file="$work/log/mount-$dir.log" --pid-file="$work/mount-$dir.pid" "$work/$dir" ||
    die "mounting volume $name on $work/$dir failed"
  mounts+=("$work/$dir")
  for _ in $(seq 100); do mountpoint -q "$work/$dir" && break; sleep 0.2; done
  mountpoint -q "$work/$dir" || die "$work/$dir is not mounted"
}
