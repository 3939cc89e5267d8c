#!/usr/bin/env bash
# Regenerates the generated section of BENCHMARKS.md: wsrkit end to end over
# loopback HTTP (sender and receiver Nodes, pebble on disk and memory store,
# 1/8/64 groups), its ceilings (net/http + etree + pebble sync pipeline, raw
# net/http, raw pebble group commit, raw etree) in interleaved rounds, then
# heap per idle group and restart time with 100,000 groups. About 6–10 min
# on the 2-core development machine.
#
#   scripts/bench.sh                 # ROUNDS=5 BENCHTIME=1s
#   ROUNDS=5 BENCHTIME=2s scripts/bench.sh
#   KEEP=/tmp/raw.txt scripts/bench.sh   # also keep the raw go test output
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
benchtime=${BENCHTIME:-1s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$work/raw.txt

go test -c -o "$work/rmp.test" ./rmp
{
  echo "wsrkit-bench: go=$(go version | cut -d' ' -f3-)"
  echo "wsrkit-bench: commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "wsrkit-bench: date=$(date -u +%Y-%m-%dT%H:%MZ)"
  echo "wsrkit-bench: nproc=$(nproc)"
  echo "wsrkit-bench: loadavg at start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  echo "wsrkit-bench: rounds=$rounds × -benchtime $benchtime"
} >"$raw"
# Rounds: every benchmark once per round, each in its own process (what ran
# before it in a process changed its speed: the ceiling ran 10-18% faster
# after three other benchmarks than fresh). The benchmarks a ratio compares
# run back to back, per group count, the end to end and its ceiling in
# alternating order by round: this machine's speed drifts by a quarter
# within minutes, so only measurements taken seconds apart are compared.
run1() { (cd rmp && "$work/rmp.test" -test.run '^$' -test.benchtime "$benchtime" -test.bench "$1") | tee -a "$raw" >&2; }
for r in $(seq "$rounds"); do
  echo "bench.sh: round $r of $rounds" >&2
  for g in 1 8 64; do
    e2e="^BenchmarkEndToEndHTTP\$/^store=pebble/groups=$g\$"
    ceil="^BenchmarkCeilingPipelineHTTP\$/^groups=$g\$"
    if (( r % 2 )); then run1 "$e2e"; run1 "$ceil"; else run1 "$ceil"; run1 "$e2e"; fi
    for b in "^BenchmarkEndToEndStreamHTTP\$/^store=pebble/groups=$g\$" \
      "^BenchmarkReceiverHTTP\$/^store=pebble/groups=$g\$" \
      "^BenchmarkCeilingHTTP\$/^groups=$g\$" "^BenchmarkCeilingPebbleSync\$/^groups=$g\$" \
      "^Benchmark(EndToEndHTTP|EndToEndStreamHTTP|ReceiverHTTP)\$/^store=mem/groups=$g\$"; do
      run1 "$b"
    done
  done
  run1 '^BenchmarkCeilingEtreeParse$'
done
echo "bench.sh: scale (100,000 groups)" >&2
(cd rmp && "$work/rmp.test" -test.run '^$' -test.benchtime 1x \
  -test.bench '^Benchmark(IdleGroupMemory|Restart100kGroups)$') | tee -a "$raw" >&2
echo "wsrkit-bench: loadavg at end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" >>"$raw"
if [[ -n "${KEEP:-}" ]]; then cp "$raw" "$KEEP"; fi
go run ./internal/benchreport -in "$raw" -out BENCHMARKS.md -command scripts/bench.sh
echo "bench.sh: BENCHMARKS.md updated" >&2
