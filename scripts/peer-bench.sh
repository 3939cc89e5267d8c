#!/usr/bin/env bash
# wsrkit against RabbitMQ on the same machine (#22): durable, ordered,
# confirmed delivery of ≈1.5 KB messages in four shapes (1 or up to 16 in
# flight, 1 or 64 groups). Installs Debian's rabbitmq-server if missing,
# runs a private broker on loopback only (its own node name, ports, data and
# cookie under a temporary folder), interleaves wsrkit's
# BenchmarkEndToEndHTTP / BenchmarkEndToEndStreamHTTP (pebble) with the Go
# AMQP client of scripts/peerbench (classic and quorum queues) round by
# round, counts each side's fsync/fdatasync per message with strace (and,
# at 64 groups × 16 in flight, every system call), stops
# the broker and writes the table with same-round ratios into BENCHMARKS.md.
# About 15 min at the defaults on the 2-core development machine (25 for
# ROUNDS=5), the strace counts included.
#
#   scripts/peer-bench.sh                    # ROUNDS=3 BENCHTIME=5s
#   ROUNDS=5 BENCHTIME=10s scripts/peer-bench.sh
#   SYNCS=0 scripts/peer-bench.sh            # skip the strace counts
#   CALLS=0 scripts/peer-bench.sh            # skip the count of every system call
#                                            # at 64 groups × 16 in flight
#   KEEP=/tmp/peer-raw.txt scripts/peer-bench.sh
#   OUT=/tmp/b.md scripts/peer-bench.sh      # write elsewhere than BENCHMARKS.md
#   WSRKIT_GOMAXPROCS=2 scripts/peer-bench.sh # wsrkit's Ps (default: nproc + 2,
#                                            # as wsrkit serve runs; README "Embedding")
#   WSRKIT_GC_HEAP_FLOOR=0 scripts/peer-bench.sh # wsrkit's GC heap floor in bytes
#                                            # (default 64 MiB, wsrkit serve's -gc-heap-floor)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
rounds=${ROUNDS:-3}
benchtime=${BENCHTIME:-5s}
syncs=${SYNCS:-1}
calls=${CALLS:-$syncs}
calls_short=${CALLS_SHORT:-2000}
calls_long=${CALLS_LONG:-10000}
short=${SYNC_SHORT:-400}
long=${SYNC_LONG:-2000}
port=${AMQP_PORT:-5673}
distport=${AMQP_DIST_PORT:-25673}
epmdport=${AMQP_EPMD_PORT:-4370}
out=${OUT:-BENCHMARKS.md}
procs=${WSRKIT_GOMAXPROCS:-$(($(nproc) + 2))}
export WSRKIT_GC_HEAP_FLOOR=${WSRKIT_GC_HEAP_FLOOR:-$((64 << 20))}
rabbitbin=/usr/lib/rabbitmq/bin

log() { echo "peer-bench.sh: $*" >&2; }

# Debian's package, without letting its maintainer scripts start the
# system-wide broker (which would listen on every interface).
install_rabbitmq() {
  [[ -x $rabbitbin/rabbitmq-server ]] && return
  if [[ $(id -u) != 0 ]]; then
    log "rabbitmq-server is not installed and installing it needs root"
    exit 1
  fi
  log "installing rabbitmq-server"
  local policy=/usr/sbin/policy-rc.d made=
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq rabbitmq-server >/dev/null
  [[ -n $made ]] && rm -f "$policy"
  return 0
}
install_rabbitmq
if [[ $syncs == 1 || $calls == 1 ]] && ! command -v strace >/dev/null; then
  if [[ $(id -u) == 0 ]]; then apt-get install -y -qq strace >/dev/null; else log "strace missing: SYNCS=0 CALLS=0"; syncs=0 calls=0; fi
fi

work=$(mktemp -d)
rmq=$work/rabbitmq
broker= job=
raw=$work/raw.txt
mkdir -p "$rmq/mnesia" "$rmq/log"

# The broker's environment: a node of its own, bound to 127.0.0.1 (AMQP,
# Erlang distribution and epmd), data on the same disk as wsrkit's stores,
# its cookie in its own HOME (only the broker's commands get these).
rmqenv=(env HOME="$rmq" RABBITMQ_NODENAME=peerbench@localhost
  RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$port" RABBITMQ_DIST_PORT="$distport"
  ERL_EPMD_ADDRESS=127.0.0.1 ERL_EPMD_PORT="$epmdport"
  RABBITMQ_MNESIA_BASE="$rmq/mnesia" RABBITMQ_LOG_BASE="$rmq/log" RABBITMQ_PID_FILE="$rmq/pid"
  RABBITMQ_CONFIG_FILE="$rmq/rabbitmq.conf" RABBITMQ_ENABLED_PLUGINS_FILE="$rmq/enabled_plugins"
  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}")
printf 'listeners.tcp.default = 127.0.0.1:%s\n' "$port" >"$rmq/rabbitmq.conf"
echo '[].' >"$rmq/enabled_plugins"

stop_broker() {
  if [[ -z $broker && -n $job ]]; then
    kill "$job" 2>/dev/null || true
  elif [[ -n $broker ]]; then
    log "stopping the broker"
    "${rmqenv[@]}" "$rabbitbin/rabbitmqctl" stop "$rmq/pid" >/dev/null 2>&1 || kill "$broker" 2>/dev/null || true
  fi
  broker= job=
  # The epmd the broker started on our port, and only that one.
  epmd -port "$epmdport" -kill >/dev/null 2>&1 || true
}
cleanup() {
  stop_broker
  rm -rf "$work"
}
trap cleanup EXIT

log "building"
go test -c -o "$work/rmp.test" ./rmp
(cd scripts/peerbench && go build -o "$work/peerbench" .)
amqp=amqp://guest:guest@127.0.0.1:$port/

log "starting the broker on 127.0.0.1:$port"
(cd "$rmq" && exec "${rmqenv[@]}" setsid "$rabbitbin/rabbitmq-server" >"$rmq/out.log" 2>&1 </dev/null) &
job=$!
"${rmqenv[@]}" "$rabbitbin/rabbitmqctl" wait --timeout 120 "$rmq/pid" >/dev/null
broker=$(cat "$rmq/pid")
if ss -ltnp 2>/dev/null | grep "pid=$broker," | grep -qv ' 127\.0\.0\.1:'; then
  log "the broker listens beyond loopback:"
  ss -ltnp | grep "pid=$broker," >&2
  exit 1
fi

{
  echo "peer-bench: go=$(go version | cut -d' ' -f3-)"
  echo "peer-bench: commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "peer-bench: date=$(date -u +%Y-%m-%dT%H:%MZ)"
  echo "peer-bench: nproc=$(nproc)"
  echo "peer-bench: wsrkit GOMAXPROCS=$procs"
  echo "peer-bench: wsrkit GC heap floor=$WSRKIT_GC_HEAP_FLOOR"
  echo "peer-bench: rabbitmq=$(dpkg-query -W -f '${Version}' rabbitmq-server 2>/dev/null || echo unknown)"
  echo "peer-bench: loadavg at start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "peer-bench: rounds=$rounds × $benchtime"
} >"$raw"

# key groups window wsrkit-benchmark [key and benchmark of further wsrkit
# variants against the same RabbitMQ runs: producers using SubmitBatch,
# producers using SubmitAsync]
shapes=(
  "g1w1 1 1 ^BenchmarkEndToEndHTTP\$/^store=pebble\$/^groups=1\$"
  "g64w1 64 1 ^BenchmarkEndToEndHTTP\$/^store=pebble\$/^groups=64\$"
  "g1w16 1 16 ^BenchmarkEndToEndStreamHTTP\$/^store=pebble\$/^groups=1\$ g1w16b ^BenchmarkEndToEndBatchHTTP\$/^store=pebble\$/^groups=1\$ g1w16p ^BenchmarkEndToEndPipelineHTTP\$/^store=pebble\$/^groups=1\$"
  "g64w16 64 16 ^BenchmarkEndToEndStreamHTTP\$/^store=pebble\$/^groups=64\$ g64w16b ^BenchmarkEndToEndBatchHTTP\$/^store=pebble\$/^groups=64\$ g64w16p ^BenchmarkEndToEndPipelineHTTP\$/^store=pebble\$/^groups=64\$"
)
export WSRKIT_BENCH_LATE_POLLS=default

wsrkit() { # pattern benchtime
  if ! (cd rmp && "$work/rmp.test" -test.run '^$' -test.cpu "$procs" -test.benchtime "$2" -test.bench "$1") >"$work/bench.out" 2>&1 ||
    ! grep '^Benchmark.*msg/s' "$work/bench.out"; then
    cat "$work/bench.out" >&2
    return 1
  fi
}
rabbit() { # queue groups window [flags]
  "$work/peerbench" run -url "$amqp" -broker-pid "$broker" -queue "$1" -groups "$2" -window "$3" "${@:4}"
}

for r in $(seq "$rounds"); do
  log "round $r of $rounds"
  for s in "${shapes[@]}"; do
    read -r _ g w pat more <<<"$s"
    # Rotate who goes first: the machine's speed drifts within minutes.
    runs=("wsrkit $pat $benchtime" "rabbit classic $g $w -time $benchtime" "rabbit quorum $g $w -time $benchtime")
    read -ra variants <<<"$more"
    for ((v = 1; v < ${#variants[@]}; v += 2)); do runs+=("wsrkit ${variants[v]} $benchtime"); done
    for i in "${!runs[@]}"; do
      ${runs[$(((i + r) % ${#runs[@]}))]} | tee -a "$raw" >&2
    done
  done
done

# wsrkit_count syncs|calls key pattern: per message of wsrkit's benchmark
# process (both nodes), its fsync+fdatasync or every call it makes.
wsrkit_count() {
  local n a=$short b=$long flags=(--seccomp-bpf -e trace=fsync,fdatasync)
  if [[ $1 == calls ]]; then a=$calls_short b=$calls_long flags=(); fi
  for n in "$a" "$b"; do
    (cd rmp && strace -f -c "${flags[@]}" -o "$work/wsrkit.$1.$n" \
      "$work/rmp.test" -test.run '^$' -test.cpu "$procs" -test.benchtime "${n}x" -test.bench "$3" >/dev/null) || return 1
  done
  "$work/peerbench" "$1" -system wsrkit -shape "$2" -short "$a" -long "$b" "$work/wsrkit.$1.$a" "$work/wsrkit.$1.$b"
}

# counted COMMAND…: a count of calls per message (a short and a long run,
# then peerbench syncs or calls), its line kept in the raw file. peerbench
# exits 3 when the short run made more calls of a kind than the long one
# (the broker's own background work fell into it): then the cell is counted
# again, at most three times, and left empty ("–") rather than negative.
counted() {
  local try rc line
  for try in 1 2 3; do
    rc=0
    line=$("$@") || rc=$?
    case $rc in
    0) echo "$line" | tee -a "$raw" >&2; return 0 ;;
    3) log "counting again ($try of 3)" ;;
    *) return "$rc" ;;
    esac
  done
  log "no count after 3 tries; its cell stays empty"
}

# broker_traced OUT [STRACE-FLAGS…] -- COMMAND…: runs COMMAND (its output
# dropped, its exit status returned) with strace -c counting the broker's
# calls into OUT.
broker_traced() {
  local out=$1 flags=() st
  shift
  while [[ $1 != -- ]]; do flags+=("$1"); shift; done
  shift
  strace -f -c "${flags[@]}" -o "$out" -p "$broker" 2>"$work/strace.err" &
  st=$!
  until grep -q attached "$work/strace.err" 2>/dev/null; do
    kill -0 "$st" 2>/dev/null || { cat "$work/strace.err" >&2; exit 1; }
    sleep 0.1
  done
  local rc=0
  "$@" >/dev/null || rc=$?
  kill -INT "$st"
  wait "$st" || true
  return "$rc"
}

# broker_syncs queue key groups window: the broker's fsync+fdatasync per message.
broker_syncs() {
  local n
  for n in "$short" "$long"; do
    broker_traced "$work/$1.$n.strace" -e trace=fsync,fdatasync -- rabbit "$1" "$3" "$4" -count "$n" || return 1
  done
  "$work/peerbench" syncs -system "$1" -shape "$2" -short "$short" -long "$long" \
    "$work/$1.$short.strace" "$work/$1.$long.strace"
}
# broker_calls queue key groups window: every call of the broker and its client per message.
broker_calls() {
  local n
  for n in "$calls_short" "$calls_long"; do
    broker_traced "$work/$1.calls.$n" -- strace -f -c -o "$work/$1.client.calls.$n" \
      "$work/peerbench" run -url "$amqp" -broker-pid "$broker" -queue "$1" -groups "$3" -window "$4" -count "$n" || return 1
  done
  "$work/peerbench" calls -system "$1" -shape "$2" -short "$calls_short" -long "$calls_long" \
    "$work/$1.calls.$calls_short" "$work/$1.calls.$calls_long" "$work/$1.client.calls.$calls_short" "$work/$1.client.calls.$calls_long"
}

if [[ $syncs == 1 ]]; then
  log "strace sync counts ($short and $long messages per cell)"
  for s in "${shapes[@]}"; do
    read -r key g w pat more <<<"$s"
    counted wsrkit_count syncs "$key" "$pat"
    read -ra variants <<<"$more"
    for ((v = 0; v + 1 < ${#variants[@]}; v += 2)); do counted wsrkit_count syncs "${variants[v]}" "${variants[v + 1]}"; done
    for q in classic quorum; do counted broker_syncs "$q" "$key" "$g" "$w"; done
  done
fi
# Every system call per message at 64 groups × 16 in flight, where CPU
# decides (BENCHMARKS.md): wsrkit's benchmark process, RabbitMQ's broker and
# client, each counted as the syncs are (long − short).
if [[ $calls == 1 ]]; then
  log "strace counts of every call at 64 groups × 16 in flight ($calls_short and $calls_long messages)"
  for s in "${shapes[@]}"; do
    read -r key g w pat _ <<<"$s"
    [[ $g == 64 && $w == 16 ]] || continue
    counted wsrkit_count calls "$key" "$pat"
    for q in classic quorum; do counted broker_calls "$q" "$key" "$g" "$w"; done
  done
fi
echo "peer-bench: loadavg at end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
stop_broker
if [[ -n ${KEEP:-} ]]; then cp "$raw" "$KEEP"; fi
[[ $out == /* ]] || out=$repo/$out
"$work/peerbench" report -in "$raw" -out "$out"
log "$out updated"
