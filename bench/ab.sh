#!/usr/bin/env bash
# A/B of two gateway builds under identical conditions: CPU µs per request of each.
#
#   bench/ab.sh <gateway-a.js> <gateway-b.js> [path] [seconds]
#
# Both gateways run at the same time on CPU 0, each in front of its own backend (dist/ build), with the
# backends and two wrk instances (50 connections each) on CPU 1. The scheduler shares CPU 0 between the
# two gateways, so the host's quiet and busy phases, which move a single run by up to 2×, hit both
# alike; two copies of the same build agree within about 3 %. Prints req/s and CPU µs per request
# (utime + stime from /proc/<pid>/stat) for each; run it again with A and B swapped. Absolute figures
# are higher than in `npm run bench` (two gateways share a core and its caches); compare A with B.
#
# To compare a change: `npm run build && cp -r dist /tmp/before`, change, `npm run build`, then
#   bench/ab.sh /tmp/before/gateway/src/main.js dist/gateway/src/main.js
# Needs `npm run build`, wrk and taskset (apt-get install -y wrk util-linux).
set -euo pipefail

gateway_a=$(realpath "$1")
gateway_b=$(realpath "$2")
path=${3:-/v2/orders/ord-1001}
seconds=${4:-5}
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()

cleanup() {
  kill -TERM "${pids[@]}" 2>/dev/null || true
  sleep 0.5
  rm -rf "$tmp"
}
trap cleanup EXIT

wait_for_listening() {
  for _ in $(seq 200); do
    grep -q '"msg":"listening"' "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$1: no 'listening' line" >&2
  exit 1
}

# start <name> <gateway.js> <backend port> <gateway port>
start() {
  LOG_LEVEL=info BACKEND_HOST=127.0.0.1 BACKEND_PORT=$3 BACKEND_ADMIN_PORT=0 \
    taskset -c 1 node "$repo/dist/services/users-orders/src/main.js" >"$tmp/$1-backend.log" &
  pids+=($!)
  wait_for_listening "$tmp/$1-backend.log"
  LOG_LEVEL=info GATEWAY_HOST=127.0.0.1 GATEWAY_PORT=$4 GATEWAY_ADMIN_PORT=0 BACKEND_URL=http://127.0.0.1:$3 \
    taskset -c 0 node "$2" >"$tmp/$1-gateway.log" &
  pids+=($!)
  wait_for_listening "$tmp/$1-gateway.log"
}

cd "$repo"
start a "$gateway_a" 18280 18281
pid_a=${pids[-1]}
start b "$gateway_b" 18282 18283
pid_b=${pids[-1]}

# load <seconds> <out-a> <out-b>: both gateways at once.
load() {
  taskset -c 1 wrk -t1 -c50 -d"$1s" "http://127.0.0.1:18281$path" >"$2" &
  local wrk_a=$!
  taskset -c 1 wrk -t1 -c50 -d"$1s" "http://127.0.0.1:18283$path" >"$3"
  wait "$wrk_a"
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
load 2 /dev/null /dev/null # warm-up: JIT, pool connections
a0=$(cpu_ticks "$pid_a") b0=$(cpu_ticks "$pid_b")
load "$seconds" "$tmp/wrk-a" "$tmp/wrk-b"
a1=$(cpu_ticks "$pid_a") b1=$(cpu_ticks "$pid_b")

tick_us=$((1000000 / $(getconf CLK_TCK)))
report() { # <label> <wrk output> <ticks>
  awk -v label="$1" -v t="$tick_us" -v ticks="$3" -v s="$seconds" \
    '/requests in/ { printf "%s: %.0f req/s, %.0f µs CPU per request\n", label, $1 / s, ticks * t / $1 }' "$2"
}
report "A $1" "$tmp/wrk-a" $((a1 - a0))
report "B $2" "$tmp/wrk-b" $((b1 - b0))
