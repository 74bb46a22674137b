#!/usr/bin/env bash
# The production path under test: runs the end-to-end, memory and MCP tests against Debian's
# PostgreSQL 15 with pgvector, beside the embedded database that `npm test` uses. Installs what
# is missing (as root: postgresql-15, postgresql-server-dev-15, and pgvector built from the
# vendored release source), starts a throwaway cluster on a free port, runs the tests with
# PSYCHE_TEST_POSTGRES pointing at it (test/helpers/postgres.ts), and removes the cluster.
#
#   npm run test:postgres            (after npm install; builds dist/ first)
#   PGVECTOR_TARBALL=path/to/pgvector-x.y.z.tar.gz npm run test:postgres
#   npm run test:postgres -- dist/test/e2e/chat.test.js   (compiled files)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pgbin=/usr/lib/postgresql/15/bin
tarball=${PGVECTOR_TARBALL:-$root/../shared/vendor/pgvector-0.8.6.tar.gz}
say() { printf 'test-postgres: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    say "needs root for: $*  (run as root, or install it yourself)"
    exit 1
  fi
}

if [ ! -x "$pgbin/initdb" ] || [ ! -x "$pgbin/pg_config" ]; then
  say "installing Debian's postgresql-15 and postgresql-server-dev-15"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq postgresql-15 postgresql-server-dev-15 make gcc >/dev/null
fi

sharedir=$("$pgbin/pg_config" --sharedir)
if [ ! -f "$sharedir/extension/vector.control" ]; then
  if [ ! -f "$tarball" ]; then
    say "pgvector is not installed and its source is not at $tarball (set PGVECTOR_TARBALL)"
    exit 1
  fi
  # A machine can have the server (whose package ships pg_config) without its headers.
  if [ ! -f "$("$pgbin/pg_config" --includedir-server)/postgres.h" ] || ! command -v make >/dev/null || ! command -v gcc >/dev/null; then
    say "installing Debian's postgresql-server-dev-15, make and gcc to build pgvector"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq postgresql-server-dev-15 make gcc >/dev/null
  fi
  say "building pgvector from $tarball"
  build=$(mktemp -d)
  tar -xzf "$tarball" -C "$build" --strip-components=1
  # OPTFLAGS="": no -march=native, so the build runs on any machine of the architecture.
  make -s -C "$build" PG_CONFIG="$pgbin/pg_config" OPTFLAGS="" >/dev/null
  as_root make -s -C "$build" PG_CONFIG="$pgbin/pg_config" install >/dev/null
  rm -rf "$build"
fi

# A throwaway cluster: PostgreSQL refuses to run as root, so as root it runs as `postgres`.
cluster=$(mktemp -d /tmp/psyche-pg.XXXXXX)
run_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" -eq 0 ]; then chown postgres "$cluster"; fi
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
run_pg "$pgbin/initdb" -D "$cluster/data" -U postgres -A trust --no-sync >/dev/null
stop_cluster() {
  run_pg "$pgbin/pg_ctl" -D "$cluster/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$cluster"
}
trap stop_cluster EXIT
# fsync off: a throwaway cluster, and the tests write much; max_connections for many servers at once.
run_pg "$pgbin/pg_ctl" -D "$cluster/data" -l "$cluster/postgres.log" -w -o "-p $port -k $cluster -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400" start >/dev/null
say "PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') with pgvector on port $port"

cd "$root"
export PSYCHE_TEST_POSTGRES="postgresql://postgres@127.0.0.1:$port/postgres"
# Arguments are compiled test files or folders (scripts/run-tests.mjs); by default the suites below:
# the end-to-end files, and the unit tier's files that run on a database (helpers/database.ts
# gives each a database of its own here). The password gate's test is the embedded database's,
# but needs psql, which this step installs; prepared-backends compares the two kinds of server;
# notify-bus needs a real one.
# The terminal and browser clients' files (tmux, chromium) are left to `npm run test:browser`:
# they test the clients, not the database, and are the most sensitive to a loaded machine. The
# files that test a client or the processes around the server (the coding agents and SDKs from
# npm, Hermes's print mode, the daemon's PID file, libuv's pool, a start without network, the
# log's hygiene) run once, in `npm test`: what they store goes through the same routes the other
# files run here, and they were a third of this tier's time.
if [ $# -eq 0 ]; then
  clients='dashboard|hermes-tui|hermes-tui-tools|coding-agents|claude-code-install|client-libraries|ollama-libraries|hermes-print|daemon|bin-threadpool|offline-start|log-hygiene'
  mapfile -t e2e < <(ls dist/test/e2e/*.test.js | grep -v -E "/($clients)\.test\.js$")
  set -- "${e2e[@]}" dist/test/memory/*.test.js dist/test/conversation/*.test.js dist/test/jobs/*.test.js dist/test/dreams/*.test.js \
    dist/test/http/routes.test.js dist/test/db/growing-tables.test.js
fi
# The suites run as the build compiled them, two at once; its copies of removed tests go first.
node scripts/stale-tests.mjs
node scripts/run-tests.mjs --jobs 2 "$@"
