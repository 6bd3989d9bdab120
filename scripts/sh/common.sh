# Shared shell helpers for scripts/start.sh and scripts/test.sh. Sourced, not run.
# Each ensure_* installs or starts what is missing and says what it did; all are idempotent.

log() { printf '\033[1m[dlq-console]\033[0m %s\n' "$*"; }
die() { printf '\033[31m[dlq-console] %s\033[0m\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else die "need root for: $*"; fi
}

APT_UPDATED=0
apt_install() {
  [ "$APT_UPDATED" = 1 ] || { as_root apt-get update -qq >/dev/null || die "apt-get update failed"; APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null || die "apt-get install $* failed"
}

# The Node.js the console, its scripts and CI run on: 24 LTS (22 also supported). A `node` of
# major 22 or 24 on PATH is used as it is; otherwise Node 24 is unpacked from the npm registry's
# `node-linux-<arch>` package (the official Linux binary, no download from anywhere else) into
# .cache/node and put first on PATH. The machine's npm keeps working: it runs on that node.
# DLQ_NODE_VERSION pins another 24.x.
NODE_PINNED=${DLQ_NODE_VERSION:-24.22.3}
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
ensure_node() {
  local major arch dir tgz
  command -v node >/dev/null || apt_install nodejs npm
  major=$(node_major)
  if [ "$major" = 22 ] || [ "$major" = 24 ]; then return; fi
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) die "Node.js 24 is needed (found $(node -v)); install Node.js 24 LTS for $(uname -m) and run this again." ;;
  esac
  dir="$(pwd)/.cache/node/v$NODE_PINNED-linux-$arch"
  if [ ! -x "$dir/bin/node" ]; then
    log "installing Node.js $NODE_PINNED from the npm registry (node-linux-$arch) into .cache/node (found $(node -v) on PATH)"
    rm -rf "$dir.partial" && mkdir -p "$dir.partial"
    tgz=$(cd "$dir.partial" && npm pack --silent "node-linux-$arch@$NODE_PINNED") || die "npm pack node-linux-$arch@$NODE_PINNED failed"
    tar -xzf "$dir.partial/$tgz" -C "$dir.partial" --strip-components=1 && rm -f "$dir.partial/$tgz"
    "$dir.partial/bin/node" -v >/dev/null || die "the Node.js binary from node-linux-$arch@$NODE_PINNED does not run on this machine"
    rm -rf "$dir" && mv "$dir.partial" "$dir"
  fi
  export PATH="$dir/bin:$PATH"
  hash -r
  [ "$(node_major)" = 24 ] || die "Node.js 24 from .cache/node did not take over PATH (node is $(command -v node))"
}

# npm ci when node_modules is missing or older than package-lock.json; always in CI.
ensure_node_modules() {
  if [ -n "${CI:-}" ] || [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "installing dependencies (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
  else
    # The generated Prisma client is not committed; make sure it exists.
    [ -d lib/generated/prisma ] || npm run --silent db:generate
  fi
}

ensure_chromium() {
  [ -x /usr/bin/chromium ] && return
  log "installing Debian's chromium for the browser tests"
  apt_install chromium
}

# promtool (from Debian's prometheus package) checks the /api/metrics exposition in the integration
# tests. Only its binary is needed: the package is downloaded and unpacked into .cache/tools (ignored),
# not installed, so no prometheus server is started or enabled as a side effect (installing the
# package starts one on 127.0.0.1:9090 wherever services may start). Exports PATH with it.
ensure_promtool() {
  local dir; dir="$(pwd)/.cache/tools"
  export PATH="$dir/usr/bin:$PATH"
  command -v promtool >/dev/null && return
  log "unpacking promtool from Debian's prometheus package into .cache/tools (the metrics tests)"
  mkdir -p "$dir/deb"
  [ "$APT_UPDATED" = 1 ] || { as_root apt-get update -qq >/dev/null || die "apt-get update failed"; APT_UPDATED=1; }
  # apt-get download writes as the _apt user where it can; a root-owned folder only earns a warning.
  (cd "$dir/deb" && rm -f prometheus_*.deb && apt-get download -qq prometheus 2>/dev/null) || die "apt-get download prometheus failed"
  dpkg-deb -x "$dir"/deb/prometheus_*.deb "$dir/unpacked"
  mkdir -p "$dir/usr/bin" && cp "$dir/unpacked/usr/bin/promtool" "$dir/usr/bin/promtool" && rm -rf "$dir/unpacked" "$dir/deb"
  command -v promtool >/dev/null || die "promtool is still missing after unpacking the prometheus package"
}

ensure_postgres() {
  if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
    log "starting PostgreSQL"
    command -v pg_ctlcluster >/dev/null || apt_install postgresql
    as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start || true
    for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
    pg_isready -h 127.0.0.1 -p 5432 -q || die "PostgreSQL did not start on 127.0.0.1:5432"
  fi
}

# Drops and recreates a database on the local server (trust auth, user postgres), optionally as a
# copy of a template database.
fresh_database() {
  local db=$1 template=${2:-}
  psql -h 127.0.0.1 -U postgres -d postgres -qtAc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null
  psql -h 127.0.0.1 -U postgres -d postgres -qtAc "CREATE DATABASE \"$db\"${template:+ TEMPLATE \"$template\"}" >/dev/null
}

# The console's database login for the test suites: a member of dlq_console_app (the migrations
# create that role and give it only SELECT and INSERT on audit_log) that owns nothing, so it can
# neither rewrite nor cut the audit log. Migrations run as postgres, the owner.
ensure_console_role() {
  PGOPTIONS='-c client_min_messages=warning' psql -h 127.0.0.1 -U postgres -d postgres -qtA -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || die "could not create the database role dlq_console"
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dlq_console_app') THEN CREATE ROLE dlq_console_app NOLOGIN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dlq_console') THEN CREATE ROLE dlq_console LOGIN; END IF;
END $$;
GRANT dlq_console_app TO dlq_console;
SQL
}

rabbit_up() { timeout 5 bash -c '</dev/tcp/127.0.0.1/5672' 2>/dev/null; }
RABBITMQ_API=http://127.0.0.1:15672/api
management_up() { curl -fsS -u guest:guest -o /dev/null "$RABBITMQ_API/overview" 2>/dev/null; }

# An empty RabbitMQ vhost of this name, guest with every permission on it: one made before is
# deleted first, with every queue and exchange a run left there.
fresh_vhost() {
  local vhost="$1" path
  path=$(node -p 'encodeURIComponent(process.argv[1])' "$vhost")
  curl -fsS -u guest:guest -o /dev/null -X DELETE "$RABBITMQ_API/vhosts/$path" 2>/dev/null || true
  curl -fsS -u guest:guest -o /dev/null -X PUT -H 'content-type: application/json' -d '{}' "$RABBITMQ_API/vhosts/$path" ||
    die "RabbitMQ's management API did not make vhost $vhost"
  curl -fsS -u guest:guest -o /dev/null -X PUT -H 'content-type: application/json' \
    -d '{"configure":".*","write":".*","read":".*"}' "$RABBITMQ_API/permissions/$path/guest" ||
    die "RabbitMQ's management API did not give guest the vhost $vhost"
}

ensure_rabbitmq() {
  if ! rabbit_up; then
    log "starting RabbitMQ"
    command -v rabbitmq-server >/dev/null || apt_install rabbitmq-server
    as_root rabbitmq-server -detached || true
    as_root rabbitmqctl await_startup --timeout 60 >/dev/null || die "RabbitMQ did not start"
  fi
  if ! management_up; then
    log "enabling RabbitMQ's management and shovel plugins"
    as_root rabbitmq-plugins enable rabbitmq_management rabbitmq_shovel rabbitmq_shovel_management >/dev/null
    for _ in $(seq 1 30); do management_up && break; sleep 1; done
    management_up || log "warning: the RabbitMQ management API did not answer; DLQ discovery will be limited"
  fi
}

# A console already running on this PGlite folder holds its lock (lib/db.ts): say so and stop.
refuse_if_running() {
  [ -z "${DATABASE_URL:-}" ] || return 0
  local lock="$1.lock" pid
  [ -s "$lock" ] || return 0
  pid=$(tr -dc 0-9 < "$lock")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    die "DLQ Console is already running on $1 (pid $pid): use that one, or stop it (Ctrl-C in its terminal, or kill $pid) and run this again."
  fi
}

refuse_if_port_taken() {
  local host=$1 port=$2
  if timeout 2 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null; then
    die "Port $port on $host is already in use by another program: stop it, or choose another port (PORT=3001 $0)."
  fi
}

# First users: passwords come from env, or are generated once and kept in $1 (mode 600).
# Nothing has a default password. The file is written only once every user exists, so a failed
# run creates them all again next time; a later run finds the file and creates nobody.
ensure_first_users() {
  local creds=$1 role var pw shown
  if [ -s "$creds" ]; then
    log "first users exist (their passwords are in $creds)"
    return
  fi
  (
    umask 077
    : > "$creds.partial"
    for role in admin operator viewer; do
      var="DLQ_$(echo "$role" | tr a-z A-Z)_PASSWORD"
      if [ -n "${!var:-}" ]; then
        pw=${!var}; shown="(the password in \$$var)"
      else
        pw=$(node -e 'process.stdout.write(require("crypto").randomBytes(12).toString("base64url"))'); shown=$pw
      fi
      DLQ_NEW_PASSWORD="$pw" npm run --silent users:create -- --email "$role@localhost" --role "$role" --password-env DLQ_NEW_PASSWORD >/dev/null
      echo "$role@localhost  $shown" >> "$creds.partial"
    done
    mv "$creds.partial" "$creds"
  )
  log "created the first users: admin@localhost, operator@localhost, viewer@localhost"
}
