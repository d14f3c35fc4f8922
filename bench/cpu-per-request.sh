#!/usr/bin/env bash
# CPU cost per request of the gateway and of the backend behind it, for A/B comparisons of builds.
#
#   bench/cpu-per-request.sh [build-root] [path] [seconds]
#
# build-root is a directory holding gateway/src/main.js and services/users-orders/src/main.js (default:
# dist/ after `npm run build`; copy it aside to compare two builds). Both servers run on CPU 0, wrk on
# CPU 1, as in `npm run bench`. Prints req/s, CPU µs per request (utime + stime from /proc/<pid>/stat)
# and context switches per request (all threads, from /proc/<pid>/task/*/status). The machine's speed
# drifts by tens of percent between runs: alternate the builds, A B A B, and compare pairs.
# Needs wrk and taskset (apt-get install -y wrk util-linux).
set -euo pipefail

root=${1:-dist}
path=${2:-/v2/orders/ord-1001}
seconds=${3:-5}
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
backend_port=18180 gateway_port=18181

cleanup() {
  kill -TERM "${gateway_pid:-}" "${backend_pid:-}" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

wait_for_listening() {
  for _ in $(seq 100); do
    grep -q '"msg":"listening"' "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$1: no 'listening' line" >&2
  exit 1
}

cd "$repo"
LOG_LEVEL=info BACKEND_HOST=127.0.0.1 BACKEND_PORT=$backend_port BACKEND_ADMIN_PORT=0 \
  taskset -c 0 node "$root/services/users-orders/src/main.js" >"$tmp/backend.log" &
backend_pid=$!
wait_for_listening "$tmp/backend.log"
LOG_LEVEL=info GATEWAY_HOST=127.0.0.1 GATEWAY_PORT=$gateway_port GATEWAY_ADMIN_PORT=0 \
  BACKEND_URL=http://127.0.0.1:$backend_port taskset -c 0 node "$root/gateway/src/main.js" >"$tmp/gateway.log" &
gateway_pid=$!
wait_for_listening "$tmp/gateway.log"

url=http://127.0.0.1:$gateway_port$path
taskset -c 1 wrk -t1 -c50 -d2s "$url" >/dev/null # warm-up: JIT, pool connections

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
switches() { awk '/ctxt_switches/ { n += $2 } END { print n }' /proc/"$1"/task/*/status; }

g0=$(cpu_ticks $gateway_pid) b0=$(cpu_ticks $backend_pid) gs0=$(switches $gateway_pid) bs0=$(switches $backend_pid)
out=$(taskset -c 1 wrk -t1 -c50 -d"${seconds}s" "$url")
g1=$(cpu_ticks $gateway_pid) b1=$(cpu_ticks $backend_pid) gs1=$(switches $gateway_pid) bs1=$(switches $backend_pid)

requests=$(awk '/requests in/ { print $1 }' <<<"$out")
rps=$(awk '/Requests\/sec/ { print $2 }' <<<"$out")
tick_us=$((1000000 / $(getconf CLK_TCK)))
awk -v rps="$rps" -v n="$requests" -v t="$tick_us" -v g=$((g1 - g0)) -v b=$((b1 - b0)) -v gs=$((gs1 - gs0)) -v bs=$((bs1 - bs0)) \
  'BEGIN { printf "req/s %.0f  gateway %.0f µs/req %.2f switches/req  backend %.0f µs/req %.2f switches/req\n", rps, g * t / n, gs / n, b * t / n, bs / n }'
