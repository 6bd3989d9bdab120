#!/usr/bin/env bash
# Starts, stops and reports the local message brokers that tests and local runs use, all on
# 127.0.0.1 and none of them installed system-wide:
#   kafka      Apache Kafka (KRaft, one combined broker+controller)  127.0.0.1:9092 (controller :9093)
#   elasticmq  ElasticMQ, an SQS-compatible server                    http://127.0.0.1:9324
#   elasticmq-tests  a second ElasticMQ, the tests' and benchmarks' own   http://127.0.0.1:9326
#              (a console on the defaults reads every DLQ of :9324, and an SQS read hides letters:
#              scripts/test.sh points its integration tests and benchmarks here, see docs/testing.md)
#   moto       moto_server, a second SQS emulator (if installed)      http://127.0.0.1:9325
#   pulsar     Apache Pulsar standalone (broker + one bookie)         http://127.0.0.1:8080 (admin and
#              WebSocket API; binary protocol :6650, bookie :3181)
#
# Usage: bash scripts/services.sh start|stop|restart|status [kafka|elasticmq|elasticmq-tests|moto|pulsar|all]
#        (default all)
#
# Jars come from Maven Central (scripts/services/<name>/pom.xml, maven-dependency-plugin
# copy-dependencies) into .cache/services/<name>/lib and are fetched again only when the pom changes.
# A scripts/services/<name>/settings.xml, if present, is passed to Maven (Pulsar's: a mirror of every
# repository to Central). Kafka's data lives in .cache/services/kafka-data, Pulsar's in
# .cache/services/pulsar-data, PID files in .cache/services/run, logs in .cache/services/logs.
# `start` waits until each service answers a real request (Kafka: a metadata request; SQS servers:
# ListQueues; Pulsar: the broker health check, which produces and consumes a message, and the
# public/default namespace) and is idempotent; `stop` sends SIGTERM, waits, then SIGKILL.
#
# Environment: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), ELASTICMQ_PORT (9324),
# ELASTICMQ_TESTS_PORT (9326),
# MOTO_PORT (9325), PULSAR_PORT (6650), PULSAR_WEB_PORT (8080), PULSAR_BOOKIE_PORT (3181),
# SERVICES_START_TIMEOUT (seconds, 120), KAFKA_HEAP_OPTS (-Xms128m -Xmx512m),
# ELASTICMQ_HEAP_OPTS (-Xms64m -Xmx256m), PULSAR_HEAP_OPTS (-Xms128m -Xmx512m),
# DLQ_SERVICES_CACHE (.cache/services), JAVA_HOME.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SPEC="$ROOT/scripts/services"
CACHE=${DLQ_SERVICES_CACHE:-$ROOT/.cache/services}
RUN="$CACHE/run"
LOGS="$CACHE/logs"
KAFKA_PORT=${KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
ELASTICMQ_PORT=${ELASTICMQ_PORT:-9324}
ELASTICMQ_TESTS_PORT=${ELASTICMQ_TESTS_PORT:-9326}
MOTO_PORT=${MOTO_PORT:-9325}
PULSAR_PORT=${PULSAR_PORT:-6650}
PULSAR_WEB_PORT=${PULSAR_WEB_PORT:-8080}
PULSAR_BOOKIE_PORT=${PULSAR_BOOKIE_PORT:-3181}
START_TIMEOUT=${SERVICES_START_TIMEOUT:-120}
STOP_TIMEOUT=${SERVICES_STOP_TIMEOUT:-30}
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}
ELASTICMQ_HEAP_OPTS=${ELASTICMQ_HEAP_OPTS:--Xms64m -Xmx256m}
PULSAR_HEAP_OPTS=${PULSAR_HEAP_OPTS:--Xms128m -Xmx512m}
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
# Modest JVMs for a 2-core machine: small code cache, few GC and compiler threads.
JVM_COMMON=(-XX:+UseSerialGC -XX:ReservedCodeCacheSize=64m -XX:CICompilerCount=2 -XX:+ExitOnOutOfMemoryError
  -Djava.awt.headless=true -Djava.net.preferIPv4Stack=true)
ALL_SERVICES=(kafka elasticmq elasticmq-tests moto pulsar)

log() { printf '\033[1m[services]\033[0m %s\n' "$*"; }
warn() { printf '\033[33m[services] %s\033[0m\n' "$*" >&2; }
err() { printf '\033[31m[services] %s\033[0m\n' "$*" >&2; }
die() { err "$*"; exit 1; }

# ---------- helpers ----------

pidfile() { echo "$RUN/$1.pid"; }
# A word that only our command line for this service contains, so a reused PID is never mistaken.
marker() {
  case $1 in
    kafka) echo "-Ddlq.services=kafka" ;;
    elasticmq) echo "-Ddlq.services=elasticmq" ;;
    elasticmq-tests) echo "-Ddlq.services=elasticmq-tests" ;;
    moto) echo "moto_server" ;;
    pulsar) echo "-Ddlq.services=pulsar" ;;
  esac
}
# Prints the PID if the service started by this script is alive.
running_pid() {
  local f pid; f=$(pidfile "$1")
  [ -f "$f" ] || return 1
  pid=$(cat "$f" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$(marker "$1")" || return 1
  echo "$pid"
}
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
log_file() { echo "$LOGS/$1.log"; }
log_tail() {
  local f; f=$(log_file "$1")
  if [ -s "$f" ]; then
    err "last lines of $f:"
    tail -n "${2:-40}" "$f" | sed 's/^/    /' >&2
  else
    err "($f is empty)"
  fi
}
rss_mb() { awk '/^VmRSS:/ { printf "%d MB", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo "? MB"; }

need_java() {
  command -v "$JAVA" >/dev/null || die "java not found: Java 17 or newer is needed (apt-get install openjdk-17-jre-headless)"
  local major
  major=$("$JAVA" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ { print $2 }')
  [ "${major%%.*}" -ge 17 ] 2>/dev/null || die "Java 17 or newer is needed (found ${major:-unknown} at $(command -v "$JAVA"))"
}

# Copies the runtime dependencies of scripts/services/$1/pom.xml into $CACHE/$1/lib, unless they are
# already there for this very pom.
fetch_jars() {
  local name=$1 pom="$SPEC/$1/pom.xml" lib="$CACHE/$1/lib" stamp want tmp settings=()
  want=$(sha256sum "$pom" | cut -d' ' -f1)
  stamp="$lib/.pom.sha256"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  command -v mvn >/dev/null || die "mvn not found: Maven is needed to fetch the $name jars (apt-get install maven)"
  log "fetching $name jars from Maven Central (first run only)"
  tmp="$CACHE/$name/lib.tmp.$$"
  [ -f "$SPEC/$name/settings.xml" ] && settings=(-s "$SPEC/$name/settings.xml")
  rm -rf "$tmp"; mkdir -p "$tmp"
  # Run from the cache so that nothing Maven writes lands in the source tree.
  if ! (cd "$CACHE/$name" && mvn -B -q -Dstyle.color=never "${settings[@]}" -f "$pom" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" \
      >"$LOGS/$name-maven.log" 2>&1); then
    rm -rf "$tmp"
    err "Maven could not fetch the $name jars"
    log_tail "$name-maven" 30
    exit 1
  fi
  rm -rf "$lib"; mv "$tmp" "$lib"
  echo "$want" >"$stamp"
}

# Starts "$@" in the background, detached from this shell, with output to the service's log; in
# $LAUNCH_DIR if set (default the cache).
launch() {
  local name=$1; shift
  (cd "${LAUNCH_DIR:-$CACHE}" && exec setsid nohup "$@" >"$(log_file "$name")" 2>&1 </dev/null) &
  echo $! >"$(pidfile "$name")"
}

# ---------- readiness probes: a real request each ----------

kafka_ready() {
  port_open "$KAFKA_PORT" || return 1
  if command -v node >/dev/null && [ -f "$ROOT/node_modules/kafkajs/package.json" ]; then
    (cd "$ROOT" && timeout 15 node "$SPEC/kafka-ready.cjs" "127.0.0.1:$KAFKA_PORT")
  else
    # Without node_modules (before npm ci): the broker logs this once it serves requests.
    grep -q "Kafka Server started" "$(log_file kafka)" 2>/dev/null
  fi
}
# The broker health check produces and reads a message on a heartbeat topic; public/default, which
# the tests and the demo use, is created by the standalone starter a moment after the broker is up.
pulsar_ready() {
  local admin="http://127.0.0.1:$PULSAR_WEB_PORT/admin/v2"
  curl -fsS -m 10 -o /dev/null "$admin/brokers/health" 2>/dev/null || return 1
  curl -fsS -m 5 "$admin/namespaces/public" 2>/dev/null | grep -qF '"public/default"'
}
sqs_ready() {
  curl -fsS -m 3 -o /dev/null -X POST "http://127.0.0.1:$1/" \
    -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: AmazonSQS.ListQueues' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0' \
    -d '{}' 2>/dev/null
}
ready() {
  case $1 in
    kafka) kafka_ready ;;
    elasticmq) sqs_ready "$ELASTICMQ_PORT" ;;
    elasticmq-tests) sqs_ready "$ELASTICMQ_TESTS_PORT" ;;
    moto) sqs_ready "$MOTO_PORT" ;;
    pulsar) pulsar_ready ;;
  esac
}
# Once a service answers: what it still needs before the tests can use it.
after_ready() {
  case $1 in
    kafka) kafka_upgrade_features ;;
    *) return 0 ;;
  esac
}
# The port a client of the service uses (Pulsar: the web port, for its admin and WebSocket APIs).
port_of() {
  case $1 in
    kafka) echo "$KAFKA_PORT" ;; elasticmq) echo "$ELASTICMQ_PORT" ;; moto) echo "$MOTO_PORT" ;;
    elasticmq-tests) echo "$ELASTICMQ_TESTS_PORT" ;;
    pulsar) echo "$PULSAR_WEB_PORT" ;;
  esac
}
# The other ports it listens on, which must be free before it starts (Pulsar's bookie takes
# PULSAR_BOOKIE_PORT on its first start; later starts reuse the port written in its cookie).
other_ports_of() {
  case $1 in
    kafka) echo "$KAFKA_CONTROLLER_PORT" ;;
    pulsar) echo "$PULSAR_PORT $PULSAR_BOOKIE_PORT" ;;
  esac
}

# ---------- per service: launch ----------

launch_kafka() {
  need_java
  fetch_jars kafka
  local lib="$CACHE/kafka/lib" data="$CACHE/kafka-data" props="$RUN/kafka.properties"
  mkdir -p "$data"
  sed -e "s|@KAFKA_PORT@|$KAFKA_PORT|g" -e "s|@CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
    -e "s|@DATA_DIR@|$data|g" "$SPEC/kafka/server.properties.template" >"$props"
  if [ ! -f "$data/meta.properties" ]; then
    # A cluster id is 16 random bytes in URL-safe base64 (what StorageTool random-uuid prints); one
    # starting with '-' would read as an option.
    local id=-
    while [[ $id == -* ]]; do id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
    log "formatting Kafka storage in $data (cluster id $id)"
    if ! "$JAVA" -Xmx256m -Dlog4j2.configurationFile="$SPEC/kafka/log4j2.xml" -cp "$lib/*" \
        kafka.tools.StorageTool format -t "$id" -c "$props" -g >"$LOGS/kafka-format.log" 2>&1; then
      err "formatting Kafka storage failed"
      log_tail kafka-format 30
      exit 1
    fi
    # A fresh format already sets every feature to this release's default (share.version=2 on 4.4).
    kafka_version >"$(kafka_features_stamp)"
  fi
  KAFKA_LAUNCHED=1
  # shellcheck disable=SC2086 # heap options are a word list on purpose
  launch kafka "$JAVA" -Ddlq.services=kafka $KAFKA_HEAP_OPTS "${JVM_COMMON[@]}" \
    -Dlog4j2.configurationFile="$SPEC/kafka/log4j2.xml" -Dkafka.logs.dir="$LOGS" \
    -cp "$lib/*" kafka.Kafka "$props"
}

# The Kafka version of the jars in $CACHE/kafka/lib, from kafka_2.13-<version>.jar.
kafka_version() {
  local jar
  jar=$(ls "$CACHE/kafka/lib"/kafka_2.13-*.jar 2>/dev/null | head -n 1)
  jar=${jar##*/kafka_2.13-}
  echo "${jar%.jar}"
}
# Holds the Kafka version whose default feature levels the data dir has (Kafka reads only the
# directories in a log dir, never a file like this one).
kafka_features_stamp() { echo "$CACHE/kafka-data/.dlq-features-version"; }

# A data dir that an older Kafka formatted keeps that release's feature levels after the jars are
# upgraded (from 4.1: metadata.version 4.1-IV1 and share.version=0, so no share groups) until
# they are upgraded on the running broker. Once per Kafka version, this raises every feature to
# the release's default, as a fresh format sets them; all but kraft.version, which a format with a
# static controller.quorum.voters leaves at 0 too.
kafka_upgrade_features() {
  local want stamp mapping line args=() tool
  # Only for a broker this run started: one already running may still be an older Kafka's.
  [ "${KAFKA_LAUNCHED:-0}" = 1 ] || return 0
  want=$(kafka_version)
  stamp=$(kafka_features_stamp)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  tool=("$JAVA" -Xmx128m "${JVM_COMMON[@]}" -Dlog4j2.configurationFile="$SPEC/kafka/log4j2.xml"
    -cp "$CACHE/kafka/lib/*" org.apache.kafka.tools.FeatureCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT")
  log "upgrading the features of $CACHE/kafka-data to Kafka $want's defaults"
  # version-mapping prints this release's defaults, one "name=level" (and a note) a line.
  if mapping=$("${tool[@]}" version-mapping 2>"$LOGS/kafka-features.log"); then
    while read -r line; do
      case $line in kraft.version=* | "") ;; *=*) args+=(--feature "${line%% *}") ;; esac
    done <<<"$mapping"
  fi
  if [ "${#args[@]}" -gt 0 ] && "${tool[@]}" upgrade "${args[@]}" >>"$LOGS/kafka-features.log" 2>&1; then
    echo "$want" >"$stamp"
    return 0
  fi
  # Everything but share groups works without it: say so loudly, and try again at the next start.
  warn "upgrading the Kafka features failed: share groups may be off"
  log_tail kafka-features 20
  return 0
}

launch_elasticmq() {
  need_java
  fetch_jars elasticmq
  # shellcheck disable=SC2086
  ELASTICMQ_PORT=$ELASTICMQ_PORT launch elasticmq "$JAVA" -Ddlq.services=elasticmq $ELASTICMQ_HEAP_OPTS \
    "${JVM_COMMON[@]}" -Dconfig.file="$SPEC/elasticmq/elasticmq.conf" \
    -cp "$CACHE/elasticmq/lib/*" org.elasticmq.server.Main
}

# The same server and config on the tests' port (its queue URLs name that port).
launch_elasticmq-tests() {
  need_java
  fetch_jars elasticmq
  # shellcheck disable=SC2086
  ELASTICMQ_PORT=$ELASTICMQ_TESTS_PORT launch elasticmq-tests "$JAVA" -Ddlq.services=elasticmq-tests \
    $ELASTICMQ_HEAP_OPTS "${JVM_COMMON[@]}" -Dconfig.file="$SPEC/elasticmq/elasticmq.conf" \
    -cp "$CACHE/elasticmq/lib/*" org.elasticmq.server.Main
}

launch_moto() {
  # moto signs queue ARNs with MOTO_ACCOUNT_ID (default 123456789012): use the same account as
  # ElasticMQ and our SQS client.
  MOTO_ACCOUNT_ID=${MOTO_ACCOUNT_ID:-000000000000} launch moto moto_server -H 127.0.0.1 -p "$MOTO_PORT"
}

launch_pulsar() {
  need_java
  fetch_jars pulsar
  # The starter keeps data/metadata (RocksDB) and data/standalone/bookkeeper relative to its working
  # directory, which is this one.
  local lib="$CACHE/pulsar/lib" data="$CACHE/pulsar-data" conf="$RUN/pulsar-standalone.conf"
  mkdir -p "$data"
  sed -e "s|@BROKER_PORT@|$PULSAR_PORT|g" -e "s|@WEB_PORT@|$PULSAR_WEB_PORT|g" \
    -e "s|@BOOKIE_PORT@|$PULSAR_BOOKIE_PORT|g" "$SPEC/pulsar/standalone.conf.template" >"$conf"
  # The --add-opens are those of Pulsar's own bin/pulsar: without them the load manager and the GC
  # metrics cannot read the JVM's CPU and GC figures, and log a stack trace each.
  # shellcheck disable=SC2086 # heap options are a word list on purpose
  LAUNCH_DIR=$data launch pulsar "$JAVA" -Ddlq.services=pulsar $PULSAR_HEAP_OPTS "${JVM_COMMON[@]}" \
    -Dio.netty.tryReflectionSetAccessible=true --add-opens java.base/java.io=ALL-UNNAMED \
    --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED \
    --add-opens java.base/java.util.zip=ALL-UNNAMED --add-opens java.base/sun.net=ALL-UNNAMED \
    --add-opens java.base/jdk.internal.platform=ALL-UNNAMED \
    --add-opens java.management/sun.management=ALL-UNNAMED \
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED \
    -cp "$lib/*" org.apache.pulsar.PulsarStandaloneStarter --config "$conf" \
    --bookkeeper-port "$PULSAR_BOOKIE_PORT" --no-functions-worker --no-stream-storage
}

# ---------- commands ----------

# Returns 0 when launched (or already up), 2 when skipped.
start_one() {
  local name=$1 pid port
  port=$(port_of "$name")
  if pid=$(running_pid "$name"); then
    log "$name is already running (pid $pid)"
    return 0
  fi
  rm -f "$(pidfile "$name")"
  if [ "$name" = moto ] && ! command -v moto_server >/dev/null; then
    if [ "$EXPLICIT" = 1 ]; then die "moto_server is not installed (pip install 'moto[server]')"; fi
    warn "moto_server is not installed: skipping moto"
    return 2
  fi
  local other
  for other in $(other_ports_of "$name"); do
    if port_open "$other" && ! port_open "$port"; then die "$name: port 127.0.0.1:$other is taken by another process"; fi
  done
  if port_open "$port"; then
    if ready "$name"; then
      warn "$name: something not started by this script already answers on 127.0.0.1:$port; leaving it alone"
      # The tests run Kafka's own tools (the console share consumer, ConfigCommand) from this
      # checkout's jars, whoever runs the broker (a CI clone on a machine where it already runs).
      if [ "$name" = kafka ]; then fetch_jars kafka; fi
      return 2
    fi
    die "$name: port 127.0.0.1:$port is taken by another process"
  fi
  log "starting $name on 127.0.0.1:$port"
  "launch_$name"
  # Its start-up time counts from here: a first start fetches its jars before it launches (Pulsar's
  # are 235 MB), and a service launched after another's download must not lose that time.
  LAUNCHED[$name]=$(date +%s)
}

wait_ready() {
  local name=$1 started=$2 deadline pid
  deadline=$((started + START_TIMEOUT))
  while :; do
    if ! pid=$(running_pid "$name"); then
      err "$name exited during start-up"
      log_tail "$name"
      return 1
    fi
    if ready "$name"; then
      log "$name is ready on 127.0.0.1:$(port_of "$name") (pid $pid, $(( $(date +%s) - started )) s, RSS $(rss_mb "$pid"))"
      return 0
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      err "$name did not answer on 127.0.0.1:$(port_of "$name") within ${START_TIMEOUT}s; stopping it"
      log_tail "$name"
      stop_one "$name" >/dev/null || true
      return 1
    fi
    sleep 1
  done
}

stop_one() {
  local name=$1 pid i
  if ! pid=$(running_pid "$name"); then
    rm -f "$(pidfile "$name")"
    log "$name is not running"
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 5; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "$name did not stop within ${STOP_TIMEOUT}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$(pidfile "$name")"
  log "$name stopped"
}

status_one() {
  local name=$1 pid port
  port=$(port_of "$name")
  if pid=$(running_pid "$name"); then
    if ready "$name"; then
      log "$name: running and answering on 127.0.0.1:$port (pid $pid, RSS $(rss_mb "$pid"))"
      return 0
    fi
    warn "$name: running (pid $pid) but not answering on 127.0.0.1:$port yet"
    return 1
  fi
  if [ "$name" = moto ] && ! command -v moto_server >/dev/null; then
    log "moto: not installed"
    [ "$EXPLICIT" = 1 ] && return 1 || return 0
  fi
  if port_open "$port" && ready "$name"; then
    log "$name: answering on 127.0.0.1:$port, but not started by this script"
    return 0
  fi
  log "$name: stopped"
  return 1
}

usage() {
  echo "usage: bash scripts/services.sh start|stop|restart|status [kafka|elasticmq|elasticmq-tests|moto|pulsar|all]" >&2
  exit 2
}

cmd=${1:-}
target=${2:-all}
[ $# -le 2 ] || usage
case $target in
  all) services=("${ALL_SERVICES[@]}"); EXPLICIT=0 ;;
  kafka | elasticmq | elasticmq-tests | moto | pulsar) services=("$target"); EXPLICIT=1 ;;
  *) usage ;;
esac
mkdir -p "$RUN" "$LOGS"

case $cmd in
  start | restart)
    if [ "$cmd" = restart ]; then for s in "${services[@]}"; do stop_one "$s"; done; fi
    # Launch everything first, then wait: the JVMs start up side by side.
    declare -A LAUNCHED=()
    t0=$(date +%s)
    waiting=()
    for s in "${services[@]}"; do
      rc=0; start_one "$s" || rc=$?
      [ "$rc" = 0 ] && waiting+=("$s")
    done
    failed=0
    for s in "${waiting[@]}"; do wait_ready "$s" "${LAUNCHED[$s]:-$t0}" && after_ready "$s" || failed=1; done
    [ "$failed" = 0 ] || die "start failed (logs in $LOGS)"
    ;;
  stop)
    for s in "${services[@]}"; do stop_one "$s"; done
    ;;
  status)
    rc=0
    for s in "${services[@]}"; do status_one "$s" || rc=1; done
    exit "$rc"
    ;;
  *) usage ;;
esac
