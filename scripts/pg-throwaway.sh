#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the results history's tests: Debian's postgresql server,
# a cluster in a temporary directory owned by an unprivileged user (`postgres` when run as
# root: initdb refuses root), listening on a Unix socket in that directory only (no TCP), trust
# authentication, one database `gpuoverlap`.
#   scripts/pg-throwaway.sh start   prints the directory, then the URI on the last line
#   scripts/pg-throwaway.sh stop DIR
# scripts/test.sh starts one, exports GPUOVERLAP_TEST_POSTGRESQL=URI for the tests, and stops
# and removes it on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
server_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r || true); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return
    fi
  done
}
bin=$(server_bin)
if [ -z "$bin" ]; then
  # shellcheck source=scripts/ensure-packages.sh
  . "$root/scripts/ensure-packages.sh"
  ensure_packages pg-throwaway postgresql
  bin=$(server_bin)
  [ -n "$bin" ] || { echo "pg-throwaway: no initdb after installing postgresql" >&2; exit 3; }
fi
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
stop() {
  as_owner "$bin/pg_ctl" -D "$1/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$1"
}
case "${1:-}" in
  start)
    dir=$(mktemp -d /tmp/gpuoverlap-pg.XXXXXX)
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
    # initdb goes back to the directory it started in: one the owner may enter.
    cd "$dir"
    if ! as_owner "$bin/initdb" -D "$dir/data" --auth=trust --username=postgres -E UTF8 \
        --locale=C >"$dir/initdb.log" 2>&1; then
      cat "$dir/initdb.log" >&2
      stop "$dir"
      exit 3
    fi
    if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off" \
        start >/dev/null; then
      cat "$dir/server.log" >&2
      stop "$dir"
      exit 3
    fi
    if ! as_owner "$bin/createdb" -h "$dir" -U postgres gpuoverlap; then
      stop "$dir"
      exit 3
    fi
    echo "$dir"
    echo "postgresql:///gpuoverlap?host=$dir&user=postgres"
    ;;
  stop)
    dir=${2:?usage: pg-throwaway.sh stop DIR}
    case "$dir" in /tmp/gpuoverlap-pg.*) ;; *) echo "pg-throwaway: not one of ours: $dir" >&2; exit 2 ;; esac
    stop "$dir"
    ;;
  *)
    echo "usage: scripts/pg-throwaway.sh start | stop DIR" >&2
    exit 2
    ;;
esac
