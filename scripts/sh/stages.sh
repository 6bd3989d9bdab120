# Stages of scripts/test.sh: each is timed, counted and recorded, and every run ends with a table of
# them. Sourced after common.sh, not run.
#
# A stage's command reports how many tests it ran by writing a number to "$STAGE_COUNT_FILE"
# (vitest_count and playwright_count read the JSON reports the runners wrote). Runs that go on in
# the background (a lane) record into the same table.

STAGES_DIR=${STAGES_DIR:-$(pwd)/.cache/test-run}
STAGES_TSV="$STAGES_DIR/stages.tsv"
RUN_STARTED=$(date +%s)

stages_reset() {
  rm -rf "$STAGES_DIR" && mkdir -p "$STAGES_DIR/reports" "$STAGES_DIR/logs"
  : > "$STAGES_TSV"
}

# stage <name> <what it counts> <command…>: runs the command, records name, status, start offset,
# seconds and count. Returns the command's status.
stage() {
  local name=$1 unit=$2 started rc=0 count
  shift 2
  export STAGE_COUNT_FILE="$STAGES_DIR/reports/$name.count"
  rm -f "$STAGE_COUNT_FILE"
  started=$(date +%s)
  log "stage $name"
  "$@" || rc=$?
  count=$(cat "$STAGE_COUNT_FILE" 2>/dev/null || echo "")
  [ "$unit" = - ] && count=-
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$([ "$rc" = 0 ] && echo passed || echo "FAILED($rc)")" \
    "$((started - RUN_STARTED))" "$(($(date +%s) - started))" "${count:-?}" "$unit" >> "$STAGES_TSV"
  return "$rc"
}

nonzero() { if [ "$1" = 0 ]; then echo 1; else echo "$1"; fi; }

# Counts a vitest JSON report's tests into STAGE_COUNT_FILE; fails on any skipped or todo test
# (a skipped test proves nothing and must not pass for a green run).
vitest_count() {
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    require("fs").writeFileSync(process.argv[2], String(r.numPassedTests));
    if (skipped > 0) { console.error(`${skipped} test(s) skipped or todo: a skipped test proves nothing`); process.exit(1); }
    if (r.numFailedTests > 0 || r.numPassedTests === 0) process.exit(1);
  ' "$1" "$STAGE_COUNT_FILE"
}

# vitest_run <report name> <vitest args…>: vitest with its JSON report, then the count.
vitest_run() {
  local report="$STAGES_DIR/reports/$1.json" rc=0
  shift
  npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || rc=$?
  [ -s "$report" ] || return "$(nonzero "$rc")"
  vitest_count "$report" || return 1
  return "$rc"
}

# playwright_run <report name> <playwright args…>: Playwright with list and JSON reporters, then the
# count of passed tests; fails on any skipped, flaky or failed test.
playwright_run() {
  local report="$STAGES_DIR/reports/$1.json" rc=0
  shift
  PLAYWRIGHT_JSON_OUTPUT_NAME="$report" npx playwright test --reporter=list,json "$@" || rc=$?
  [ -s "$report" ] || return "$(nonzero "$rc")"
  playwright_count "$report" || return 1
  return "$rc"
}

# Counts a Playwright JSON report's passed tests into STAGE_COUNT_FILE; fails on any skipped, flaky
# or failed test, and on a report that ran nothing.
playwright_count() {
  node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).stats;
    require("fs").writeFileSync(process.argv[2], String(s.expected));
    if (s.skipped > 0) { console.error(`${s.skipped} test(s) skipped: a skipped test proves nothing`); process.exit(1); }
    if (s.unexpected > 0 || s.flaky > 0 || s.expected === 0) process.exit(1);
  ' "$1" "$STAGE_COUNT_FILE"
}

# The table of every stage so far, in the order they started, and the run's wall time.
stages_table() {
  [ -s "$STAGES_TSV" ] || return 0
  local total=$(($(date +%s) - RUN_STARTED))
  printf '\n\033[1m[dlq-console] stages (wall time; lanes that ran side by side overlap)\033[0m\n'
  sort -s -t$'\t' -k3,3n "$STAGES_TSV" | awk -F'\t' '
    BEGIN { printf "  %-22s %-12s %9s %9s %8s  %s\n", "stage", "status", "start", "took", "count", "of" }
    { printf "  %-22s %-12s %6d:%02d %6d:%02d %8s  %s\n", $1, $2, $3/60, $3%60, $4/60, $4%60, $5, $6 }'
  printf '  %-22s %-12s %9s %6d:%02d\n' "whole run" "" "" $((total / 60)) $((total % 60))
}

# Fails unless every named stage ran in this run, passed, and counted more than zero: a full run
# whose stage was skipped (or silently ran nothing) must not look green.
stages_require() {
  local missing=0 name line count
  for name in "$@"; do
    line=$(awk -F'\t' -v n="$name" '$1 == n' "$STAGES_TSV" | tail -1)
    count=$(printf '%s' "$line" | cut -f5)
    if [ -z "$line" ]; then
      printf '\033[31m[dlq-console] stage %s did not run\033[0m\n' "$name" >&2; missing=1
    elif [ "$(printf '%s' "$line" | cut -f2)" != passed ]; then
      printf '\033[31m[dlq-console] stage %s did not pass\033[0m\n' "$name" >&2; missing=1
    elif ! [[ "$count" =~ ^[0-9]+$ ]] || [ "$count" -le 0 ]; then
      printf '\033[31m[dlq-console] stage %s counted %s: nothing was checked\033[0m\n' "$name" "${count:-nothing}" >&2; missing=1
    fi
  done
  return "$missing"
}

# lane <name> <command…>: runs a command in the background (its output in logs/<name>.log), for
# stages that can go on beside the foreground ones; wait_lane prints its output and its status.
declare -A LANE_PIDS=()
lane() {
  local name=$1
  shift
  log "lane $name runs in the background (output: ${STAGES_DIR#"$(pwd)"/}/logs/$name.log)"
  # Its own process group (set -m), so stop_lanes can stop everything it started.
  set -m
  ("$@") > "$STAGES_DIR/logs/$name.log" 2>&1 &
  LANE_PIDS[$name]=$!
  set +m
}
wait_lane() {
  local name=$1 rc=0
  wait "${LANE_PIDS[$name]}" || rc=$?
  unset "LANE_PIDS[$name]"
  log "lane $name finished ($([ "$rc" = 0 ] && echo passed || echo "FAILED, exit $rc")); its output:"
  sed 's/^/  | /' "$STAGES_DIR/logs/$name.log"
  return "$rc"
}
# On exit (Ctrl-C, a failure): stop lanes still running, so nothing outlives the run.
stop_lanes() {
  local pid
  for pid in "${LANE_PIDS[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
}
