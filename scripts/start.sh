#!/usr/bin/env bash
# Sets up and runs DLQ Console on http://127.0.0.1:${PORT:-3000} with working defaults:
# installs dependencies, starts local RabbitMQ if needed, migrates the database (embedded PGlite
# under .data/ unless DATABASE_URL is set), creates first users, seeds demo dead letters, builds
# and starts the production server. Re-running keeps data and users.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sh/common.sh

PORT=${PORT:-3000}
HOST=${HOST:-127.0.0.1}
ensure_node
ensure_node_modules
ensure_rabbitmq
if [ "${DLQ_LOCAL_SERVICES:-1}" = 1 ] && command -v java >/dev/null && command -v mvn >/dev/null; then
  log "starting local Kafka and ElasticMQ (SQS) on loopback; the first start fetches their jars from Maven Central"
  bash scripts/services.sh start kafka || log "warning: Kafka did not start; its connection will show as unreachable"
  bash scripts/services.sh start elasticmq || log "warning: ElasticMQ did not start; its connection will show as unreachable"
else
  log "local Kafka and ElasticMQ skipped (need Java and Maven; DLQ_LOCAL_SERVICES=0 skips them on purpose)"
fi

mkdir -p .data && chmod 700 .data
if [ -z "${NEXTAUTH_SECRET:-}" ]; then
  [ -s .data/nextauth-secret ] || (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))' > .data/nextauth-secret)
  NEXTAUTH_SECRET=$(cat .data/nextauth-secret)
fi
export NEXTAUTH_SECRET
export NEXTAUTH_URL=${NEXTAUTH_URL:-http://$HOST:$PORT}
export NEXT_TELEMETRY_DISABLED=1

log "migrating the database (${DATABASE_URL:+PostgreSQL}${DATABASE_URL:-embedded PGlite in .data/pglite})"
npm run --silent db:migrate

# First users: passwords come from env, or are generated once and kept in .data/ (mode 600).
# Nothing has a default password.
CREDS=.data/first-users.txt
if [ ! -s "$CREDS" ]; then
  umask 077
  : > "$CREDS.partial"
  for role in admin operator viewer; do
    var="DLQ_$(echo "$role" | tr a-z A-Z)_PASSWORD"
    if [ -n "${!var:-}" ]; then
      pw=${!var}; shown="(the password in \$$var)"
    else
      pw=$(node -e 'process.stdout.write(require("crypto").randomBytes(12).toString("base64url"))'); shown=$pw
    fi
    DLQ_NEW_PASSWORD="$pw" npm run --silent users:create -- --email "$role@localhost" --role "$role" --password-env DLQ_NEW_PASSWORD >/dev/null
    echo "$role@localhost  $shown" >> "$CREDS.partial"
  done
  mv "$CREDS.partial" "$CREDS"   # only once every user exists, so a failed run retries them all
fi

if [ "${DLQ_SEED_DEMO:-1}" = 1 ]; then
  log "seeding demo dead letters into the local brokers (set DLQ_SEED_DEMO=0 to skip)"
  npm run --silent seed:demo
fi

if [ ! -f .next/BUILD_ID ] || [ -n "$(find app components lib proxy.ts next.config.ts package-lock.json -newer .next/BUILD_ID -print -quit 2>/dev/null)" ]; then
  log "building the console (next build)"
  npx next build >/tmp/dlq-console-build.log 2>&1 || { tail -40 /tmp/dlq-console-build.log; die "build failed (full log: /tmp/dlq-console-build.log)"; }
fi

log "DLQ Console: http://$HOST:$PORT"
log "sign in with one of these (from $CREDS):"
sed 's/^/    /' "$CREDS"
log "more users: DLQ_NEW_PASSWORD=... npm run users:create -- --email you@example.com --role operator --password-env DLQ_NEW_PASSWORD"
# The app closes the database itself on SIGTERM/SIGINT (instrumentation.ts).
export NEXT_MANUAL_SIG_HANDLE=true
exec node node_modules/next/dist/bin/next start --hostname "$HOST" --port "$PORT"
