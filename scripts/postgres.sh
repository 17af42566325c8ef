#!/usr/bin/env bash
# A PostgreSQL server for weft-service's tests, in a cluster of its own.
#
#   bash scripts/postgres.sh start   # prints postgres://postgres@127.0.0.1:PORT/postgres
#   bash scripts/postgres.sh stop
#   bash scripts/postgres.sh url     # the URL if it runs, else exit 1
#
# `start` installs PostgreSQL from Debian's packages if it is missing, makes
# a cluster under target/postgres/ (trust authentication on 127.0.0.1, no
# Unix socket, durability off: it holds test data only), picks a free port
# the first time and keeps it, starts the server and prints its URL on
# stdout (everything else goes to stderr or target/postgres/log). The
# server refuses to run as root: as root the cluster belongs to the
# `postgres` user and every server command runs as that user. Both
# commands are idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-$PWD/target}"
root="$target/postgres"
# Set by resolve, through the link make_root may leave: the postgres user
# cannot pass through a private home.
real="" data="" log=""

resolve() {
  real="$(readlink -f "$root")"
  data="$real/data"
  log="$real/log"
}

say() { echo "postgres.sh: $*" >&2; }

bindir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$dir" ] && [ -x "$dir/pg_ctl" ] && echo "$dir"
}

install_postgres() {
  bindir >/dev/null && return
  if [ "$(id -u)" -ne 0 ]; then
    say "PostgreSQL is not installed; run as root to install it (apt-get install postgresql)"
    exit 1
  fi
  say "installing PostgreSQL (apt-get install postgresql)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
}

# Runs a server command as the cluster's owner, from the cluster's
# directory (the owner may not be allowed into the current one).
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd "$real" && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# The cluster's directory must be reachable by its owner. As root, a
# checkout under a private home (/root) is not: the cluster then lives in
# /tmp and target/postgres is a link to it.
make_root() {
  [ -e "$root" ] && return
  mkdir -p "$target"
  if [ "$(id -u)" -ne 0 ]; then
    mkdir -p "$root"
    return
  fi
  mkdir -p "$root"
  chown postgres:postgres "$root"
  if ! runuser -u postgres -- test -w "$root"; then
    rmdir "$root"
    local elsewhere
    elsewhere="$(mktemp -d /tmp/weft-service-postgres.XXXXXX)"
    chown postgres:postgres "$elsewhere"
    ln -s "$elsewhere" "$root"
    say "$target is not reachable by the postgres user: the cluster is in $elsewhere"
  fi
}

free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  say "no free port found"
  exit 1
}

port() { sed -n 's/^port = \([0-9]*\)$/\1/p' "$data/postgresql.conf" | tail -n 1; }
url() { echo "postgres://postgres@127.0.0.1:$(port)/postgres"; }
running() { [ -f "$data/PG_VERSION" ] && as_owner "$(bindir)/pg_ctl" -D "$data" status >/dev/null 2>&1; }

init_cluster() {
  [ -f "$data/PG_VERSION" ] && return
  say "creating a cluster in $data"
  as_owner "$(bindir)/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$real/initdb.log" 2>&1 \
    || { cat "$real/initdb.log" >&2; exit 1; }
  cat >>"$data/postgresql.conf" <<EOF
# weft-service's test cluster (scripts/postgres.sh)
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
port = $(free_port)
EOF
}

start() {
  install_postgres
  make_root
  resolve
  init_cluster
  if ! running; then
    as_owner "$(bindir)/pg_ctl" -D "$data" -l "$log" -w -t 60 start >&2 \
      || { tail -n 20 "$log" >&2; exit 1; }
  fi
  url
}

stop() {
  bindir >/dev/null || return 0
  [ -e "$root" ] || return 0
  resolve
  if running; then
    as_owner "$(bindir)/pg_ctl" -D "$data" -m fast -w -t 60 stop >&2
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) [ -e "$root" ] && resolve && running && url ;;
  *)
    echo "usage: $0 start|stop|url" >&2
    exit 2
    ;;
esac
