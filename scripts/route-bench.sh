#!/usr/bin/env bash
# The transparent-route benchmark of BENCHMARKS.md: BenchmarkRouteHTTP (64
# plain SOAP clients → gateway A's -route → gateway B → an in-process
# service) against rmp's BenchmarkEndToEndHTTP (store=pebble, groups=64),
# each in its own process, back to back and in alternating order by round,
# with the msg/s ratio of every round and their median.
#
#   scripts/route-bench.sh            # ROUNDS=3 BENCHTIME=2s
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
benchtime=${BENCHTIME:-2s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/rmp.test" ./rmp
go test -c -o "$work/gateway.test" ./internal/gateway
msgs() { grep -o '[0-9.]* msg/s' | head -1 | cut -d' ' -f1; }
e2e() { (cd rmp && "$work/rmp.test" -test.run '^$' -test.benchtime "$benchtime" -test.bench '^BenchmarkEndToEndHTTP$/^store=pebble/groups=64$') | tee -a "$work/raw" | msgs; }
route() { (cd internal/gateway && "$work/gateway.test" -test.run '^$' -test.benchtime "$benchtime" -test.bench "^BenchmarkRouteHTTP\$/^ordered=$1\$") | tee -a "$work/raw" | msgs; }
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %12s %16s %16s %8s %8s\n' round e2e-msg/s route-msg/s ordered-msg/s ratio ordered
ratios=() oratios=()
for r in $(seq "$rounds"); do
  if (( r % 2 )); then a=$(e2e); b=$(route false); c=$(route true); else c=$(route true); b=$(route false); a=$(e2e); fi
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", b/a}')
  oratio=$(awk -v a="$a" -v c="$c" 'BEGIN{printf "%.2f", c/a}')
  ratios+=("$ratio") oratios+=("$oratio")
  printf '%-6s %12s %16s %16s %8s %8s\n' "$r" "$a" "$b" "$c" "$ratio" "$oratio"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
echo "median route/e2e: $(median "${ratios[@]}") (ordered: $(median "${oratios[@]}"))"
if [[ -n "${KEEP:-}" ]]; then cp "$work/raw" "$KEEP"; fi
