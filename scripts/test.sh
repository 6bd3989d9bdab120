#!/usr/bin/env bash
# Sets up and runs the whole test suite: type check, unit tests, integration tests against the real
# PostgreSQL and RabbitMQ on this machine, the redrive fault tests, and Playwright e2e in Debian's
# Chromium against the production build, then the first command's defaults (embedded database) in
# Chromium and from a fresh clone. Installs what it needs (npm ci, apt-get chromium) and starts local services.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sh/common.sh

ensure_node
ensure_node_modules
ensure_chromium
ensure_postgres
ensure_rabbitmq
log "starting Kafka, ElasticMQ, moto and Pulsar on loopback (jars cached in .cache/services)"
bash scripts/services.sh start

export NEXT_TELEMETRY_DISABLED=1
# Overridable so a second run (or a developer's) does not drop the databases another one is using.
TEST_DB=${DLQ_TEST_DB:-dlq_console_test}
E2E_DB=${DLQ_E2E_DB:-dlq_console_e2e}

log "fresh databases $TEST_DB and $E2E_DB"
fresh_database "$TEST_DB"
fresh_database "$E2E_DB"
# Migrations run as the owner (postgres); the tests and the e2e console connect as dlq_console,
# which may only SELECT and INSERT on audit_log, as a production console should (README "Audit log").
ensure_console_role
OWNER=postgresql://postgres@127.0.0.1:5432
APP=postgresql://dlq_console@127.0.0.1:5432
DATABASE_URL="$OWNER/$TEST_DB" npm run --silent db:migrate
DATABASE_URL="$OWNER/$E2E_DB" npm run --silent db:migrate

log "type check"
npx tsc --noEmit

log "unit tests"
npx vitest run --project unit

ensure_promtool
log "integration tests (PostgreSQL, RabbitMQ)"
DATABASE_URL="$APP/$TEST_DB" DATABASE_OWNER_URL="$OWNER/$TEST_DB" npx vitest run --project integration

# After the integration tests, alone: they SIGKILL worker processes and stop and start RabbitMQ
# (rabbitmqctl stop_app/start_app). Their workers claim only their own jobs, so the database the
# integration tests left behind does not matter. Size: FAULT_RUNS x FAULT_LETTERS (default 2 x 2,000).
log "redrive fault tests (SIGKILLed worker, two workers on one job, RabbitMQ stop_app/start_app)"
DATABASE_URL="$APP/$TEST_DB" DATABASE_OWNER_URL="$OWNER/$TEST_DB" npx vitest run --project faults

log "production build"
npx next build >/tmp/dlq-console-build.log 2>&1 || { tail -60 /tmp/dlq-console-build.log; die "next build failed"; }

log "e2e (Chromium)"
# Only the e2e server reads the e2e connections (one of them deliberately down); integration tests
# use the default local connections.
export DLQ_CONSOLE_CONFIG=${DLQ_CONSOLE_CONFIG:-$PWD/e2e/dlq-console.e2e.config.json}
export DATABASE_URL="$APP/$E2E_DB"
# The e2e database is created afresh each run: its audit checkpoints start afresh with it.
export DLQ_AUDIT_CHECKPOINTS="$PWD/.cache/e2e-audit-checkpoints.jsonl"
rm -f "$DLQ_AUDIT_CHECKPOINTS"
for role in admin operator viewer; do
  # Test-only accounts; their passwords are in e2e/users.ts.
  pw="e2e-$role-password-1"
  DLQ_NEW_PASSWORD="$pw" npm run --silent users:create -- --email "$role@e2e.test" --role "$role" --password-env DLQ_NEW_PASSWORD >/dev/null
done
npm run --silent seed:demo >/dev/null
npx playwright test

# The README's first command on its defaults: no DATABASE_URL, the embedded PGlite database.
log "e2e on start.sh's defaults (embedded database, Chromium): sign in, browse, scan, redrive, restart"
env -u DATABASE_URL -u DLQ_CONSOLE_CONFIG -u DLQ_AUDIT_CHECKPOINTS npx playwright test --config e2e/embedded/playwright.config.ts

log "newcomer check: a fresh clone, ./scripts/start.sh, sign in over HTTP, restart, sign in again"
env -u DATABASE_URL -u DLQ_CONSOLE_CONFIG -u DLQ_AUDIT_CHECKPOINTS bash scripts/newcomer-check.sh
