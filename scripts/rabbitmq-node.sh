#!/usr/bin/env bash
# A private RabbitMQ node beside the machine's own, on other ports, for tests that stop the broker
# (the redrive fault tests run `rabbitmqctl stop_app`) or benchmarks that should not share it.
#
# Usage: bash scripts/rabbitmq-node.sh start|stop|status|env
#   start   starts node $NODE (default dlqtest@localhost) with AMQP on 127.0.0.1:$AMQP_PORT (5673),
#           the management API on 127.0.0.1:$MGMT_PORT (15673); data and logs under $DIR
#           (default /tmp/dlq-rabbitmq-node); waits until it answers. Idempotent.
#   stop    stops it (rabbitmqctl stop), data kept
#   status  exit 0 when it answers
#   env     prints the variables that point tests and benchmarks at it, e.g.
#             eval "$(bash scripts/rabbitmq-node.sh env)"; npm run test:faults
#
# Uses the machine's rabbitmq-server (Debian package) and runs the node as the rabbitmq user, as
# the package does. Guest/guest works on loopback.
set -euo pipefail

NODE=${DLQ_RABBITMQ_NODE_NAME:-dlqtest@localhost}
AMQP_PORT=${DLQ_RABBITMQ_NODE_AMQP_PORT:-5673}
MGMT_PORT=${DLQ_RABBITMQ_NODE_MGMT_PORT:-15673}
DIST_PORT=${DLQ_RABBITMQ_NODE_DIST_PORT:-25673}
DIR=${DLQ_RABBITMQ_NODE_DIR:-/tmp/dlq-rabbitmq-node}

log() { printf '\033[1m[rabbitmq-node]\033[0m %s\n' "$*"; }
answers() { rabbitmqctl -q -n "$NODE" await_startup --timeout 2 >/dev/null 2>&1; }

case "${1:-}" in
  start)
    if answers; then log "$NODE already answers on 127.0.0.1:$AMQP_PORT"; exit 0; fi
    command -v rabbitmq-server >/dev/null || { echo "rabbitmq-server is not installed" >&2; exit 1; }
    mkdir -p "$DIR/mnesia" "$DIR/log"
    cat >"$DIR/rabbitmq.conf" <<EOF
listeners.tcp.local = 127.0.0.1:$AMQP_PORT
management.tcp.port = $MGMT_PORT
management.tcp.ip = 127.0.0.1
EOF
    cp /etc/rabbitmq/enabled_plugins "$DIR/enabled_plugins" 2>/dev/null || echo '[rabbitmq_management,rabbitmq_shovel,rabbitmq_shovel_management].' >"$DIR/enabled_plugins"
    if id rabbitmq >/dev/null 2>&1; then chown -R rabbitmq:rabbitmq "$DIR"; fi
    log "starting $NODE (AMQP 127.0.0.1:$AMQP_PORT, management 127.0.0.1:$MGMT_PORT, data $DIR)"
    (
      cd "$DIR"
      RABBITMQ_CONF_ENV_FILE=/dev/null RABBITMQ_NODENAME="$NODE" RABBITMQ_DIST_PORT="$DIST_PORT" \
        RABBITMQ_CONFIG_FILE="$DIR/rabbitmq.conf" RABBITMQ_MNESIA_BASE="$DIR/mnesia" RABBITMQ_LOG_BASE="$DIR/log" \
        RABBITMQ_ENABLED_PLUGINS_FILE="$DIR/enabled_plugins" ERL_EPMD_ADDRESS=127.0.0.1 \
        nohup rabbitmq-server >"$DIR/server.out" 2>&1 &
    )
    # await_startup fails at once while the node has not registered yet: poll until it answers.
    for _ in $(seq 1 120); do
      if answers; then log "$NODE answers"; exit 0; fi
      sleep 1
    done
    tail -20 "$DIR/server.out" >&2
    echo "$NODE did not answer within 120 s" >&2
    exit 1
    ;;
  stop)
    if answers; then rabbitmqctl -q -n "$NODE" stop; log "stopped $NODE"; else log "$NODE is not running"; fi
    ;;
  status)
    answers
    ;;
  env)
    mkdir -p "$DIR"
    echo "export DLQ_TEST_AMQP_PORT=$AMQP_PORT DLQ_TEST_RABBITMQ_MGMT_PORT=$MGMT_PORT DLQ_TEST_RABBITMQ_NODE=$NODE"
    echo "export RABBITMQ_URL=amqp://guest:guest@127.0.0.1:$AMQP_PORT RABBITMQ_MANAGEMENT_URL=http://guest:guest@127.0.0.1:$MGMT_PORT"
    echo "export DLQ_CONSOLE_CONFIG=$DIR/console.json"
    cat >"$DIR/console.json" <<EOF
{"connections":[{"kind":"rabbitmq","id":"local-rabbitmq","name":"Private RabbitMQ node","url":"amqp://127.0.0.1:$AMQP_PORT","usernameEnv":"RABBITMQ_USERNAME","passwordEnv":"RABBITMQ_PASSWORD","management":{"url":"http://127.0.0.1:$MGMT_PORT","usernameEnv":"RABBITMQ_USERNAME","passwordEnv":"RABBITMQ_PASSWORD"}}]}
EOF
    ;;
  *)
    echo "usage: $0 start|stop|status|env" >&2
    exit 2
    ;;
esac
