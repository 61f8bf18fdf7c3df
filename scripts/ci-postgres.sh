#!/usr/bin/env bash
# Start a throwaway PostgreSQL for the tests and print `export DATABASE_URL=…` (for `eval`).
#
#   eval "$(bash scripts/ci-postgres.sh)"     # start (or reuse) the cluster
#   bash scripts/ci-postgres.sh --stop        # stop it and remove its directory
#   bash scripts/ci-postgres.sh --restart     # restart it (fast shutdown, same port and data)
#
# Installs Debian's `postgresql` package when no initdb/pg_ctl is found. The cluster lives in
# $SESS_PG_DIR (default: $TMPDIR/sess-mcp-ci-postgres), listens on 127.0.0.1 only (a free port,
# its unix socket inside that directory), trusts local connections and runs without fsync: it
# is for tests, never for data. As root it runs as the `postgres` user (initdb refuses root).
# Idempotent: a running cluster is reused. Quiet: only the export line goes to stdout; logs are in
# the directory (server.log, setup.log).
set -euo pipefail

dir="${SESS_PG_DIR:-${TMPDIR:-/tmp}/sess-mcp-ci-postgres}"
db=sess_mcp_test

find_bin() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$found" ] && [ -x "$found/initdb" ] && [ -x "$found/pg_ctl" ]; then
    echo "$found"
  elif command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  fi
}

as_owner() {
  if [ "$(id -u)" != 0 ]; then
    "$@"
  elif command -v runuser >/dev/null 2>&1; then
    runuser -u postgres -- "$@"
  else
    su -s /bin/sh postgres -c "$(printf '%q ' "$@")"
  fi
}

bin=$(find_bin)

if [ "${1:-}" = "--stop" ]; then
  if [ -n "$bin" ] && [ -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  exit 0
fi

if [ "${1:-}" = "--restart" ]; then
  # pg_ctl restart keeps the options of the first start (postmaster.opts); the log file is given
  # again, or the server would write to this script's output and hold it open.
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart >>"$dir/setup.log" 2>&1 ||
    { cat "$dir/setup.log" >&2; exit 1; }
  exit 0
fi

if [ -z "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "ci-postgres: PostgreSQL is not installed and this is not root (apt-get install postgresql)" >&2
    exit 1
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  bin=$(find_bin)
  [ -n "$bin" ] || { echo "ci-postgres: no initdb after installing postgresql" >&2; exit 1; }
fi

# initdb refuses root: as root, the cluster belongs to `postgres` (the package creates that user).
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  useradd --system --user-group --no-create-home --shell /bin/sh postgres
fi

url() { echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$(cat "$dir/port")/$db"; }

# Reuse a running cluster that answers (a killed server can linger as a zombie "running").
ready() {
  if [ -x "$bin/pg_isready" ]; then
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/port")" -t 5
  else
    as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
  fi
}
if [ -f "$dir/port" ] && [ -f "$dir/data/postmaster.pid" ] && ready; then
  url
  exit 0
fi

# A stale directory (a stopped or half-made cluster): start over.
if [ -d "$dir" ]; then
  if [ -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
fi
mkdir -p "$dir"
chmod 0700 "$dir"
if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi

log="$dir/setup.log"
as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$log" 2>&1 ||
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >>"$log" 2>&1 ||
  { cat "$log" >&2; exit 1; }

port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off"
opts="$opts -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start >>"$log" 2>&1 ||
  { cat "$log" "$dir/server.log" >&2 2>/dev/null; exit 1; }
echo "$port" >"$dir/port"

psql_bin="$bin/psql"
[ -x "$psql_bin" ] || psql_bin=psql
as_owner "$psql_bin" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAt \
  -c "CREATE DATABASE $db" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }

url
