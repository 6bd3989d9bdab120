#!/usr/bin/env bash
# Sets up and runs the test suite. Without arguments: every tier, the whole suite (what CI runs).
# With arguments: only the tiers named, in the order of the full run.
#
#   fast         lint and format (Biome), type check, unit tests, unit tests with the clock a year ahead
#   integration  integration tests on real PostgreSQL, RabbitMQ, Kafka, ElasticMQ, moto and Pulsar,
#                files in parallel, one database per worker
#   faults       redrive fault tests and RabbitMQ outages (SIGKILLed workers, rabbitmqctl stop_app):
#                alone, because they stop what every other test uses
#   e2e          Playwright in Debian's Chromium against the production build
#   embedded     start.sh's defaults (embedded PGlite) in Chromium: sign in, browse, scan, redrive, restart
#   newcomer     a fresh clone, ./scripts/start.sh, sign in over HTTP, restart, sign in again
#   bench        every benchmark in bench/ at its smoke size (no timing asserted: a benchmark that
#                throws fails), the page-speed one against the production build
#
# Installs what it needs (npm ci, Node 24 from the npm registry when the machine's is older,
# apt-get chromium and faketime) and starts local services. Every run ends with a table of each
# stage's wall time and test count. TEST_INTEGRATION_WORKERS sets the integration tier's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sh/common.sh
source scripts/sh/stages.sh
source scripts/sh/clock.sh

ALL_TIERS=(fast integration faults e2e embedded newcomer bench)
usage() { die "usage: $0 [${ALL_TIERS[*]// /|}]… (no argument: all of them)"; }
declare -A WANT=()
if [ $# = 0 ]; then
  for t in "${ALL_TIERS[@]}"; do WANT[$t]=1; done
  FULL=1
else
  for t in "$@"; do
    case " ${ALL_TIERS[*]} " in *" $t "*) WANT[$t]=1 ;; *) usage ;; esac
  done
  FULL=0
fi
wants() { [ -n "${WANT[$1]:-}" ]; }
needs_services() { wants integration || wants faults || wants e2e || wants embedded || wants newcomer || wants bench; }

# A private node this run started is stopped once the faults tier is done with it (its memory and
# CPU go back to the tiers still running), or when the run ends before that (a stage failed, Ctrl-C);
# one that was already running before the run is left as it was.
stop_private_node_if_ours() {
  [ -e "$STAGES_DIR/private-node-ours" ] || return 0
  rm -f "$STAGES_DIR/private-node-ours"
  bash scripts/rabbitmq-node.sh stop >/dev/null 2>&1 || log "the private RabbitMQ node did not stop; stop it with: bash scripts/rabbitmq-node.sh stop"
}

stages_reset
trap 'rc=$?; stop_lanes; stop_private_node_if_ours; stages_table; exit $rc' EXIT

export NEXT_TELEMETRY_DISABLED=1
# Overridable so a second run (or a developer's) does not drop the databases another one is using.
TEST_DB=${DLQ_TEST_DB:-dlq_console_test}
E2E_DB=${DLQ_E2E_DB:-dlq_console_e2e}
OWNER=postgresql://postgres@127.0.0.1:5432
APP=postgresql://dlq_console@127.0.0.1:5432
# Integration files run in parallel: each vitest worker has its own database cloned from a migrated
# template. 3 because the tests mostly wait on brokers and Postgres, and 3 kept this 2-core machine
# busy (3:41-3:54 beside the newcomer check); other counts were not compared. See docs/testing.md.
INTEGRATION_WORKERS=${TEST_INTEGRATION_WORKERS:-3}
# The integration tests' and benchmarks' SQS: an ElasticMQ of their own (services.sh's
# elasticmq-tests), not the :9324 one the consoles on the defaults read (the newcomer and embedded
# tiers' consoles index every SQS DLQ there on their own, and an SQS read hides the letters it
# holds from every other reader). The test kits, the demo seeder and the default config follow it.
TESTS_SQS_ENDPOINT=${TESTS_SQS_ENDPOINT:-http://127.0.0.1:${ELASTICMQ_TESTS_PORT:-9326}}
# The integration tests' RabbitMQ vhost, made afresh by the databases stage: consoles on the defaults
# (vhost /) beside them never see their queues (docs/testing.md, "Shared brokers").
TESTS_VHOST=${TESTS_VHOST:-dlq-tests}

setup() {
  ensure_node
  ensure_node_modules
}

# What the broker tiers need: Chromium, PostgreSQL, RabbitMQ and the Maven-built services.
services() {
  wants e2e || wants embedded || wants bench && ensure_chromium
  ensure_postgres
  ensure_rabbitmq
  log "starting Kafka, ElasticMQ (the consoles' and the tests'), moto and Pulsar on loopback (jars cached in .cache/services)"
  bash scripts/services.sh start
  if wants faults; then
    # Started here (not found running): the faults tier stops it when it is done with it.
    bash scripts/rabbitmq-node.sh status >/dev/null 2>&1 || touch "$STAGES_DIR/private-node-ours"
    bash scripts/rabbitmq-node.sh start
  fi
}

# Migrations run as the owner (postgres); the tests and the e2e console connect as dlq_console,
# which may only SELECT and INSERT on audit_log, as a production console should (docs/security.md#the-database-roles).
databases() {
  local n
  ensure_console_role
  if wants integration || wants faults; then
    log "database $TEST_DB (migrated), cloned for $INTEGRATION_WORKERS integration workers and the fault tests"
    fresh_database "$TEST_DB"
    DATABASE_URL="$OWNER/$TEST_DB" npm run --silent db:migrate >/dev/null
    for n in $(seq 1 "$INTEGRATION_WORKERS"); do fresh_database "${TEST_DB}_w$n" "$TEST_DB"; done
    fresh_database "${TEST_DB}_faults" "$TEST_DB"
  fi
  if wants integration; then
    log "RabbitMQ vhost $TESTS_VHOST (empty) for the integration tests"
    fresh_vhost "$TESTS_VHOST"
  fi
  if wants e2e; then
    log "database $E2E_DB (migrated)"
    fresh_database "$E2E_DB"
    DATABASE_URL="$OWNER/$E2E_DB" npm run --silent db:migrate >/dev/null
  fi
}

fast_tier() {
  stage lint files biome_ci
  stage typecheck files typecheck
  stage unit tests vitest_run unit --project unit
  ensure_faketime
  stage unit-year-ahead tests a_year_ahead vitest_run unit-year-ahead --project unit
}
biome_ci() {
  local out
  out=$(npx biome ci --error-on-warnings --colors=off . 2>&1) || { printf '%s\n' "$out"; return 1; }
  printf '%s\n' "$out" | tail -1
  printf '%s\n' "$out" | sed -n 's/^Checked \([0-9]*\) files.*/\1/p' > "$STAGE_COUNT_FILE"
}
typecheck() {
  local out
  out=$(npx tsc --noEmit --extendedDiagnostics 2>&1) || { printf '%s\n' "$out" | grep -v '^[A-Z][A-Za-z /]*: ' ; return 1; }
  printf '%s\n' "$out" | sed -n 's/^Files: *\([0-9]*\)$/\1/p' > "$STAGE_COUNT_FILE"
}

integration_tier() {
  ensure_promtool
  stage integration tests integration_tests
}
integration_tests() (
  export DATABASE_URL="$APP/$TEST_DB" DATABASE_OWNER_URL="$OWNER/$TEST_DB" DLQ_TEST_DB_WORKERS="$INTEGRATION_WORKERS"
  export SQS_ENDPOINT="$TESTS_SQS_ENDPOINT" RABBITMQ_VHOST="$TESTS_VHOST"
  vitest_run integration --project integration --maxWorkers="$INTEGRATION_WORKERS"
)

# They SIGKILL worker processes and stop and start RabbitMQ (rabbitmqctl stop_app/start_app), so
# they run on a private RabbitMQ node (scripts/rabbitmq-node.sh: AMQP 5673, management 15673) that
# nothing else uses, and can go on beside other tiers. Their workers claim only their own jobs.
# Size: FAULT_RUNS x FAULT_LETTERS (default 2 x 2,000).
faults_tier() {
  stage faults tests faults_on_private_node
}
faults_on_private_node() {
  local rc=0
  bash scripts/rabbitmq-node.sh start
  (
    eval "$(bash scripts/rabbitmq-node.sh env)"
    export DATABASE_URL="$APP/${TEST_DB}_faults" DATABASE_OWNER_URL="$OWNER/${TEST_DB}_faults"
    vitest_run faults --project faults --maxWorkers=1
  ) || rc=$?
  stop_private_node_if_ours
  return "$rc"
}

# One production build for the e2e and embedded tiers (whichever lane asks first builds it).
build() {
  [ -e "$STAGES_DIR/built" ] && return
  stage build routes next_build
  touch "$STAGES_DIR/built"
}
next_build() {
  local out="$STAGES_DIR/logs/next-build.log"
  npx next build > "$out" 2>&1 || { tail -60 "$out"; return 1; }
  grep -c '^[├└┌]' "$out" > "$STAGE_COUNT_FILE" || true
}

e2e_tier() {
  # Only the e2e server reads the e2e connections (one of them deliberately down).
  (
    export DLQ_CONSOLE_CONFIG=${DLQ_CONSOLE_CONFIG:-$PWD/e2e/dlq-console.e2e.config.json}
    export DATABASE_URL="$APP/$E2E_DB"
    # The e2e database is created afresh each run: its audit checkpoints start afresh with it.
    export DLQ_AUDIT_CHECKPOINTS="$PWD/.cache/e2e-audit-checkpoints.jsonl"
    rm -f "$DLQ_AUDIT_CHECKPOINTS"
    for role in admin operator viewer; do
      # Test-only accounts; their passwords are in e2e/users.ts.
      DLQ_NEW_PASSWORD="e2e-$role-password-1" npm run --silent users:create -- --email "$role@e2e.test" \
        --role "$role" --password-env DLQ_NEW_PASSWORD >/dev/null
    done
    npm run --silent seed:demo >/dev/null
    stage e2e tests playwright_run e2e
  )
}

# The README's first command on its defaults: no DATABASE_URL, the embedded PGlite database.
embedded_tier() {
  stage embedded tests embedded_tests
}
embedded_tests() (
  unset DATABASE_URL DLQ_CONSOLE_CONFIG DLQ_AUDIT_CHECKPOINTS
  playwright_run embedded --config e2e/embedded/playwright.config.ts
)

newcomer_tier() {
  stage newcomer checks newcomer_check
}
newcomer_check() (
  unset DATABASE_URL DLQ_CONSOLE_CONFIG DLQ_AUDIT_CHECKPOINTS
  bash scripts/newcomer-check.sh
)

# Every benchmark at its smoke size (bench/run.ts --smoke): a few thousand letters each, no figure
# asserted, a benchmark that throws, reports no row or runs past 5 minutes fails the stage. Each
# makes its own throwaway database (DATABASE_OWNER_URL's server) and names its own queues, topics
# and vhosts; it runs once the consoles lane ended (see the layout below). The count is the
# benchmarks that passed; their rows are in reports/bench-*.jsonl.
bench_smoke() (
  export DATABASE_URL="$APP/postgres" DATABASE_OWNER_URL="$OWNER/postgres" SQS_ENDPOINT="$TESTS_SQS_ENDPOINT"
  BENCH_REPORT="$STAGES_DIR/reports/bench-smoke.jsonl" npx tsx bench/run.ts --smoke --skip=page-speed
)
# The page-speed benchmark starts the production build (`build`) on its own port and database and
# reads the demo DLQs, so it comes after the e2e tests, on freshly seeded demo letters.
bench_pages() (
  export DATABASE_URL="$APP/postgres" DATABASE_OWNER_URL="$OWNER/postgres"
  npm run --silent seed:demo >/dev/null
  BENCH_REPORT="$STAGES_DIR/reports/bench-pages.jsonl" npx tsx bench/run.ts --smoke page-speed
)

consoles_lane() {
  if wants newcomer; then newcomer_tier; fi
  if wants embedded; then
    build
    embedded_tier
  fi
}

# What a run does, in order. Lanes run beside the foreground where nothing is shared:
#  (the benchmarks' smoke runs after the integration tests and the consoles lane; its page-speed
#  part after the e2e tests, beside the fault tests: see bench_smoke and bench_pages)
#  - the services start beside the fast tier (which needs none);
#  - the newcomer check, the build and the embedded e2e (their own consoles, ports and PGlite
#    folders; they reseed only the demo queues) beside the integration tests (which name their own
#    queues and topics, never touch demo ones, and use an ElasticMQ of their own: TESTS_SQS_ENDPOINT);
#  - the fault tests (on their private RabbitMQ node, with their own database) beside the e2e
#    tests, which come last and alone otherwise: they read the demo queues the others reseed.
stage setup - setup
if needs_services; then
  if wants fast; then
    lane services stage services - services
    fast_tier
    wait_lane services
  else
    stage services - services
  fi
  stage databases - databases
  if wants integration && { wants newcomer || wants embedded; }; then
    lane consoles consoles_lane
    integration_tier
    wait_lane consoles
    # After the consoles lane, never beside it: those consoles run on the defaults, and a console's
    # indexer rescans every SQS DLQ the sampler finds changed, the benchmarks' queues too (it read a
    # bench's 2,000 letters while the bench read them; CI failed on it 2026-12-07).
    if wants bench; then stage bench-smoke benches bench_smoke; fi
  else
    if wants integration; then integration_tier; fi
    if wants bench; then stage bench-smoke benches bench_smoke; fi
    consoles_lane
  fi
  if wants faults && wants e2e; then
    lane faults faults_tier
    build
    e2e_tier
    if wants bench; then stage bench-pages benches bench_pages; fi
    wait_lane faults
  else
    if wants faults; then faults_tier; fi
    if wants e2e; then
      build
      e2e_tier
    fi
    if wants bench; then
      build
      stage bench-pages benches bench_pages
    fi
  fi
else
  fast_tier
fi

if [ "$FULL" = 1 ]; then
  stages_require lint typecheck unit unit-year-ahead integration faults build e2e embedded newcomer bench-smoke bench-pages
fi
log "all tests passed"
