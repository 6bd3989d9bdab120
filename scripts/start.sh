#!/usr/bin/env bash
# Sets up and runs DLQ Console on http://127.0.0.1:${PORT:-3000} with working defaults:
# installs dependencies, starts local RabbitMQ if needed, migrates the database (embedded PGlite
# under .data/ unless DATABASE_URL is set), creates first users, seeds demo dead letters, builds
# and starts the production server. Re-running keeps data and users, and seeds nothing again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sh/common.sh

PORT=${PORT:-3000}
HOST=${HOST:-127.0.0.1}
# Everything the console keeps on disk lives beside the PGlite folder: the database, its lock, the
# generated secrets and keys, the first users' passwords (lib/crypto/payload-cipher.ts agrees).
export DLQ_CONSOLE_DATA_DIR=${DLQ_CONSOLE_DATA_DIR:-$PWD/.data/pglite}
DATA=$(dirname "$DLQ_CONSOLE_DATA_DIR")

# Refuse early, in one sentence, what would otherwise fail halfway with a stack trace.
refuse_if_running "$DLQ_CONSOLE_DATA_DIR"
refuse_if_port_taken "$HOST" "$PORT"

ensure_node
ensure_node_modules
ensure_rabbitmq
if [ "${DLQ_LOCAL_SERVICES:-1}" = 1 ] && command -v java >/dev/null && command -v mvn >/dev/null; then
  log "starting local Kafka, ElasticMQ (SQS) and Pulsar on loopback; the first start fetches their jars from Maven Central"
  # Exit 2: something else already answers on the port (services.sh says so); the console uses it.
  for svc in kafka elasticmq pulsar; do
    bash scripts/services.sh start "$svc" || [ $? = 2 ] || log "warning: $svc did not start; its connection will show as unreachable"
  done
else
  log "local Kafka, ElasticMQ and Pulsar skipped (need Java and Maven; DLQ_LOCAL_SERVICES=0 skips them on purpose)"
fi

mkdir -p "$DATA" && chmod 700 "$DATA"
if [ -z "${NEXTAUTH_SECRET:-}" ]; then
  [ -s "$DATA/nextauth-secret" ] || (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))' > "$DATA/nextauth-secret")
  NEXTAUTH_SECRET=$(cat "$DATA/nextauth-secret")
fi
export NEXTAUTH_SECRET
export NEXTAUTH_URL=${NEXTAUTH_URL:-http://$HOST:$PORT}
export NEXT_TELEMETRY_DISABLED=1

log "migrating the database (${DATABASE_URL:+PostgreSQL}${DATABASE_URL:-embedded PGlite in $DLQ_CONSOLE_DATA_DIR})"
npm run --silent db:migrate

CREDS="$DATA/first-users.txt"
ensure_first_users "$CREDS"

# Demo letters are seeded once per data folder: a restart keeps what the operator was working on.
SEEDED="$DATA/demo-seeded"
if [ "${DLQ_SEED_DEMO:-1}" != 1 ]; then
  log "demo dead letters skipped (DLQ_SEED_DEMO=${DLQ_SEED_DEMO})"
elif [ -s "$SEEDED" ]; then
  log "demo dead letters were seeded $(cat "$SEEDED"); kept as they are (\`npm run seed:demo\` resets them)"
else
  log "seeding demo dead letters into the local brokers (set DLQ_SEED_DEMO=0 to skip)"
  npm run --silent seed:demo
  date -u +"on %Y-%m-%d at %H:%M UTC" > "$SEEDED"
fi

if [ ! -f .next/BUILD_ID ] || [ -n "$(find app components lib proxy.ts next.config.ts package-lock.json -newer .next/BUILD_ID -print -quit 2>/dev/null)" ]; then
  log "building the console (next build)"
  npx next build >/tmp/dlq-console-build.log 2>&1 || { tail -40 /tmp/dlq-console-build.log; die "build failed (full log: /tmp/dlq-console-build.log)"; }
fi

# Checked again: the build takes a while, and something may have taken the port meanwhile.
refuse_if_port_taken "$HOST" "$PORT"
log "DLQ Console: http://$HOST:$PORT"
log "sign in with one of these (from $CREDS):"
sed 's/^/    /' "$CREDS"
log "more users: DLQ_NEW_PASSWORD=... npm run users:create -- --email you@example.com --role operator --password-env DLQ_NEW_PASSWORD"
log "stop with Ctrl-C; running this again keeps users, scans, jobs and the audit log"
# The app closes the database itself on SIGTERM/SIGINT (instrumentation.ts).
export NEXT_MANUAL_SIG_HANDLE=true
# The console's own Node options (scripts/console-node-options says why); yours in NODE_OPTIONS win.
CONSOLE_NODE_OPTIONS=$(grep -v '^#' scripts/console-node-options | tr '\n' ' ' | xargs)
export NODE_OPTIONS="$CONSOLE_NODE_OPTIONS${NODE_OPTIONS:+ $NODE_OPTIONS}"
exec node node_modules/next/dist/bin/next start --hostname "$HOST" --port "$PORT"
