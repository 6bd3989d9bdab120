#!/usr/bin/env bash
# The first five minutes of a new user, checked by CI: a clone of this repository into an empty
# folder, `./scripts/start.sh` on its defaults (embedded PGlite, no config file), sign-in over HTTP
# with an account it printed, the DLQ list; SIGTERM; start again on the same folder; sign in again
# with the same password. Fails if any step fails. Needs the local brokers running (test.sh starts
# them) and port ${PORT:-3000} free.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sh/common.sh

SRC=$PWD
WORK=$(mktemp -d /tmp/dlq-newcomer.XXXXXX)
PORT=${PORT:-3000}
URL="http://127.0.0.1:$PORT"
pid=""
# Checks that passed, for the test command's stage table.
CHECKS=0
passed() { CHECKS=$((CHECKS + 1)); }
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

log "newcomer check: cloning into $WORK"
git clone -q "$SRC" "$WORK/dlq-console"
cd "$WORK/dlq-console"
# A new user's shell: none of the test run's settings.
unset DATABASE_URL DLQ_CONSOLE_CONFIG DLQ_CONSOLE_DATA_DIR NEXTAUTH_URL NEXTAUTH_SECRET PORT

start_console() {
  local log=$1
  ./scripts/start.sh > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null "$URL/api/ready" 2>/dev/null && passed && return 0
    kill -0 "$pid" 2>/dev/null || { tail -40 "$log"; die "newcomer check: start.sh exited before the console answered"; }
    sleep 1
  done
  tail -40 "$log"; die "newcomer check: the console did not answer at $URL"
}

stop_console() {
  kill -TERM "$pid"
  local rc=0; wait "$pid" || rc=$?
  pid=""
  [ "$rc" = 0 ] || die "newcomer check: the console exited with $rc on SIGTERM"
  passed
}

# Signs in as $1 with password $2 the way the sign-in form does, then loads the DLQ list.
sign_in_and_list() {
  local jar="$WORK/cookies" csrf status
  rm -f "$jar"
  csrf=$(curl -fsS -c "$jar" -b "$jar" "$URL/api/auth/csrf" | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).csrfToken')
  status=$(curl -sS -o "$WORK/signin.json" -w '%{http_code}' -c "$jar" -b "$jar" -X POST "$URL/api/auth/callback/credentials" \
    --data-urlencode "csrfToken=$csrf" --data-urlencode "email=$1" --data-urlencode "password=$2" \
    --data-urlencode "json=true" --data-urlencode "callbackUrl=$URL/")
  [ "$status" = 200 ] || die "newcomer check: sign-in as $1 answered HTTP $status: $(head -c 300 "$WORK/signin.json")"
  passed
  curl -fsS -b "$jar" "$URL/api/auth/session" | grep -q "\"email\":\"$1\"" || die "newcomer check: no session for $1 after sign-in"
  passed
  curl -fsS -b "$jar" -o "$WORK/list.html" "$URL/" || die "newcomer check: the DLQ list did not load for $1"
  passed
  grep -q 'data-testid="dlq-row"' "$WORK/list.html" || die "newcomer check: the DLQ list shows no DLQ for $1"
  passed
  grep -q 'demo.orders.dlq' "$WORK/list.html" || die "newcomer check: the DLQ list lacks the demo DLQ demo.orders.dlq"
  passed
}

started=$(date +%s)
start_console "$WORK/first.log"
log "newcomer check: first start answered after $(( $(date +%s) - started )) s"
read -r email password < <(grep '^admin@' .data/first-users.txt)
grep -qF -e "$password" "$WORK/first.log" || die "newcomer check: start.sh did not print the admin password"
passed
sign_in_and_list "$email" "$password"
stop_console

started=$(date +%s)
start_console "$WORK/second.log"
log "newcomer check: restart answered after $(( $(date +%s) - started )) s"
grep -q "first users exist" "$WORK/second.log" || die "newcomer check: the restart did not find the first users"
passed
sign_in_and_list "$email" "$password"
stop_console
log "newcomer check passed: signed in and listed DLQs before and after a restart ($CHECKS checks)"
[ -z "${STAGE_COUNT_FILE:-}" ] || echo "$CHECKS" > "$STAGE_COUNT_FILE"
