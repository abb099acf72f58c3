#!/usr/bin/env bash
# Apache Kafka 4.1.1 as a single KRaft node (broker + controller) on 127.0.0.1, from Maven Central
# jars resolved by pom.xml beside this script. For the integration tests; no Kafka install needed.
#
#   kafka.sh jars             resolve the jars once (cached), print the folder holding them
#   kafka.sh up STATE_DIR     format STATE_DIR (first time only), start the node, wait until it
#                             accepts connections, print: export KAFKA_BOOTSTRAP_SERVERS=…
#                             KAFKA_SASL_BOOTSTRAP_SERVERS=… KAFKA_STATE=…
#   kafka.sh down STATE_DIR   stop the node started there (by its pid file)
#
# Two client listeners: PLAINTEXT, and SASL_PLAINTEXT with the PLAIN mechanism and one user,
# `lineage`, whose password is KAFKA_SASL_PASSWORD (default `lineage-test-password`; a test
# broker's, kept in STATE_DIR/server.properties).
# env: KAFKA_PORT, KAFKA_SASL_PORT, KAFKA_CONTROLLER_PORT (default: free ports, kept in STATE_DIR so `up` after
# `down` restarts the same node on the same ports), KAFKA_CACHE (default
# ~/.cache/lineage-warehouse/kafka-4.1.1), KAFKA_HEAP (default 512m), KAFKA_START_TIMEOUT
# (seconds to wait for the broker, default 180). Needs Java 17 and Maven.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=4.1.1
CACHE=${KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lineage-warehouse/kafka-$VERSION}
LIBS=$CACHE/libs

jars() {
  if [ -f "$LIBS/.complete" ]; then echo "$LIBS"; return 0; fi
  command -v mvn >/dev/null || { echo "kafka.sh: mvn (Maven) is not on PATH" >&2; return 1; }
  rm -rf "$LIBS.tmp"; mkdir -p "$CACHE"
  if ! mvn -B -q -f "$HERE/pom.xml" -Dkafka.libs="$LIBS.tmp" \
      dependency:copy-dependencies >"$CACHE/resolve.log" 2>&1; then
    tail -n 30 "$CACHE/resolve.log" >&2; return 1
  fi
  ls "$LIBS.tmp"/kafka_2.13-$VERSION.jar >/dev/null
  touch "$LIBS.tmp/.complete"; rm -rf "$LIBS"; mv "$LIBS.tmp" "$LIBS"
  echo "$LIBS"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

java_cp() { echo "$(jars)/*"; }

up() {
  local state=${1:?usage: kafka.sh up STATE_DIR}
  mkdir -p "$state/logs"; state=$(cd "$state" && pwd)
  local cp; cp=$(java_cp)
  if [ ! -f "$state/server.properties" ]; then
    local port=${KAFKA_PORT:-$(free_port)} cport=${KAFKA_CONTROLLER_PORT:-$(free_port)}
    local sport=${KAFKA_SASL_PORT:-$(free_port)}
    local secret=${KAFKA_SASL_PASSWORD:-lineage-test-password}
    cat >"$state/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,SASL_PLAINTEXT://127.0.0.1:$sport,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_PLAINTEXT://127.0.0.1:$sport
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_lineage="$secret";
log.dirs=$state/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
  fi
  local port sport
  port=$(sed -n 's/^advertised.listeners=PLAINTEXT:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$state/server.properties")
  sport=$(sed -n 's/^advertised.listeners=.*SASL_PLAINTEXT:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$state/server.properties")
  local jvm=(java "-Xmx${KAFKA_HEAP:-512m}" "-Xms${KAFKA_HEAP:-512m}"
    "-Dlog4j2.configurationFile=$HERE/log4j2.properties" -cp "$cp")
  if [ ! -f "$state/data/meta.properties" ]; then
    local cluster; cluster=$("${jvm[@]}" kafka.tools.StorageTool random-uuid 2>>"$state/logs/format.log" | tail -n 1)
    "${jvm[@]}" kafka.tools.StorageTool format -t "$cluster" -c "$state/server.properties" \
      >>"$state/logs/format.log" 2>&1 || { tail -n 20 "$state/logs/format.log" >&2; return 1; }
  fi
  nohup "${jvm[@]}" kafka.Kafka "$state/server.properties" >>"$state/logs/server.log" 2>&1 &
  echo $! >"$state/kafka.pid"
  local pid; pid=$(cat "$state/kafka.pid")
  local wait=${KAFKA_START_TIMEOUT:-180}
  for _ in $(seq 1 $((wait * 2))); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null \
        && grep -q "Kafka Server started" "$state/logs/server.log"; then
      echo "export KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:$port KAFKA_SASL_BOOTSTRAP_SERVERS=127.0.0.1:$sport KAFKA_STATE=$state"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$state/logs/server.log" >&2; rm -f "$state/kafka.pid"; return 1
    fi
    sleep 0.5
  done
  echo "kafka.sh: broker not ready after $wait s" >&2; down "$state"; return 1
}

down() {
  local state=${1:?usage: kafka.sh down STATE_DIR}
  [ -f "$state/kafka.pid" ] || return 0
  local pid; pid=$(cat "$state/kafka.pid")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$state/kafka.pid"
}

case ${1:-} in
  jars) jars ;;
  up) up "${2:-}" ;;
  down) down "${2:-}" ;;
  *) echo "usage: kafka.sh jars | up STATE_DIR | down STATE_DIR" >&2; exit 2 ;;
esac
