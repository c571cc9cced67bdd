#!/usr/bin/env bash
# Load bench of `verdict serve` on loopback: throughput and p50/p99/p99.9
# latency at concurrency 1, 16 and 64 for a small and a max (just under
# 1 MiB) packet, measured with oha (installed from crates.io, pinned, into
# $CARGO_TARGET_DIR/bench-tools), beside the same checks run in-process;
# then the server's memory per idle connection with 5,000 open. The anchor:
# `wasmtime serve` (wasmtime-cli at the version verdict links, installed
# like oha) running a trivial wasi:http handler (wasi-http-anchor/) at the
# same small points, and the ratio verdict/wasmtime per concurrency.
#
# Usage: host/server/bench/load.sh  (BENCH_N: checks per small point,
# default 50000, a few seconds each, so that the start of a point (oha
# opening its connections) is not a percent of it; max points run a tenth.)
set -euo pipefail
cd "$(dirname "$0")/../../.."

target=${CARGO_TARGET_DIR:-$PWD/target}
tools=$target/bench-tools
oha_version=1.16.0
n=${BENCH_N:-50000}
n_max=$((n / 10))
idle=${BENCH_IDLE:-5000}

if [[ ! -x $tools/bin/oha ]] || ! "$tools/bin/oha" --version | grep -q "$oha_version"; then
    CARGO_TARGET_DIR=$tools/build cargo install --locked --root "$tools" --version "$oha_version" oha
fi
oha=$tools/bin/oha
# The wasmtime verdict links (Cargo.lock), so the anchor runs the same engine.
wasmtime_version=$(sed -n '/^name = "wasmtime"$/{n;s/^version = "\(.*\)"$/\1/p;}' Cargo.lock)
[[ -n $wasmtime_version ]] || { echo "no wasmtime in Cargo.lock" >&2; exit 1; }
if [[ ! -x $tools/bin/wasmtime ]] || ! "$tools/bin/wasmtime" --version | grep -q "^wasmtime $wasmtime_version "; then
    CARGO_TARGET_DIR=$tools/build cargo install --locked --root "$tools" --version "$wasmtime_version" wasmtime-cli
fi
wasmtime=$tools/bin/wasmtime
cargo build --release --locked --target wasm32-wasip2 --manifest-path host/server/bench/wasi-http-anchor/Cargo.toml --target-dir "$target"
anchor=$target/wasm32-wasip2/release/wasi_http_anchor.wasm
cargo build --release --locked -p verdict-cli --bin verdict
cargo build --release --locked -p verdict-server --example in_process
verdict=$target/release/verdict
in_process=$target/release/examples/in_process

work=$(mktemp -d)
server=""
anchor_server=""
cleanup() {
    for pid in "$server" "$anchor_server"; do
        if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    done
    rm -rf "$work"
}
trap cleanup EXIT

# Waits until file $2 has a line matching $1, at most $3 tenths of a second.
wait_for_line() {
    for _ in $(seq "$3"); do
        grep -q "$1" "$2" && return 0
        sleep 0.1
    done
}

ulimit -n "$(ulimit -Hn)"
mkdir "$work/art"
echo '{"id":"A42","ready":true}' > "$work/art/A42"
# Both sides then read it from the directory store's memory (a file is
# kept there once unchanged for 2 s), not one side from disk.
sleep 2
"$in_process" packets "$work"
guest=$("$in_process" guest)
token=bench-token-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat > "$work/verdict.toml" <<TOML
[server]
max_concurrent_checks = 1024
header_read_timeout_ms = 60000
drain_grace_ms = 0

[tenants.bench]
artifact_root = "art"
completion = "$guest"
token_hash = "$("$verdict" serve hash-token "$token" | tail -n 1)"
max_concurrent_checks = 1024
TOML

VERDICT_CACHE_DIR=$work/cache "$verdict" serve --config "$work/verdict.toml" --listen 127.0.0.1:0 \
    2> "$work/serve.log" &
server=$!
wait_for_line 'listening on' "$work/serve.log" 200
addr=$(sed -n 's/^verdict serve: listening on //p' "$work/serve.log")
[[ -n $addr ]] || { cat "$work/serve.log"; exit 1; }
url=http://$addr/v1/tenants/bench/completion
echo "verdict serve on $addr (pid $server); $(nproc) cores, load generator on the same machine"

summary() { python3 host/server/bench/summary.py "$1"; }

for packet in small max; do
    count=$n
    [[ $packet == max ]] && count=$n_max
    echo "== $packet packet ($(wc -c < "$work/$packet.json") bytes)"
    # Warm up (compiled code, pools, connections).
    "$oha" -n 500 -c 16 -m POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -D "$work/$packet.json" --no-tui --output-format quiet "$url" > /dev/null || true
    for c in 1 16 64; do
        "$oha" -n "$count" -c "$c" -m POST -H "Authorization: Bearer $token" \
            -H 'Content-Type: application/json' -D "$work/$packet.json" --no-tui \
            --output-format json "$url" | tee "$work/$packet-c$c.json" | summary "served c=$c"
    done
    "$in_process" run "$work/$packet.json" "$work/art" "$count" | tee "$work/$packet-in-process.txt"
done

# Where the time goes: the HTTP floor (GET /healthz) and a POST read and
# parsed but refused (400: auth, body, packet parsing; no sandbox call).
echo '{"executionId":"bench"}' > "$work/invalid.json"
for c in 1 16; do
    "$oha" -n "$n" -c "$c" --no-tui --output-format json "http://$addr/healthz" \
        | tee "$work/healthz-c$c.json" | summary "healthz c=$c"
    "$oha" -n "$n" -c "$c" -m POST -H "Authorization: Bearer $token" -D "$work/invalid.json" \
        --no-tui --output-format json "$url" | summary "400 c=$c"
done

# The server's overhead at concurrency 1 (p50): the served check against
# the same check in-process, whole and beyond a round trip on which the
# server does nothing (GET /healthz: the client, the loopback, wake-ups).
python3 - "$work" <<'PY'
import json, re, sys
work = sys.argv[1]
p50 = lambda name: json.load(open(f"{work}/{name}"))["latencyPercentiles"]["p50"] * 1e6
floor = p50("healthz-c1.json")
for packet in ("small", "max"):
    text = open(f"{work}/{packet}-in-process.txt").read()
    inproc = float(re.search(r"c=1 .*?p50 ([0-9.]+) ms", text).group(1)) * 1e3
    served = p50(f"{packet}-c1.json")
    print(f"overhead c=1 {packet}: served {served:.0f} us - in-process {inproc:.0f} us = {served - inproc:.0f} us;"
          f" beyond the healthz round trip ({floor:.0f} us): {served - inproc - floor:.0f} us")
PY

# The anchor: wasmtime serve (a fresh instance per request, pooling
# allocator; -S cli=y as Rust's std imports wasi:cli) answering the small
# POST with a fixed JSON body, at the same points; then verdict's small
# points over it.
"$wasmtime" serve --addr 127.0.0.1:0 -O pooling-allocator=y -S cli=y "$anchor" 2> "$work/wasmtime.log" &
anchor_server=$!
wait_for_line 'Serving HTTP on' "$work/wasmtime.log" 300
anchor_addr=$(sed -n 's|^Serving HTTP on http://\([^/]*\)/.*|\1|p' "$work/wasmtime.log")
[[ -n $anchor_addr ]] || { cat "$work/wasmtime.log"; exit 1; }
anchor_url=http://$anchor_addr/
for _ in $(seq 100); do
    curl -fsS -o /dev/null -X POST -d @"$work/small.json" "$anchor_url" && break
    sleep 0.1
done
echo "== anchor: wasmtime serve $wasmtime_version on $anchor_addr (pid $anchor_server), small packet"
"$oha" -n 500 -c 16 -m POST -H 'Content-Type: application/json' -D "$work/small.json" \
    --no-tui --output-format quiet "$anchor_url" > /dev/null || true
for c in 1 16 64; do
    "$oha" -n "$n" -c "$c" -m POST -H 'Content-Type: application/json' -D "$work/small.json" \
        --no-tui --output-format json "$anchor_url" | tee "$work/anchor-c$c.json" | summary "wasmtime c=$c"
done
kill "$anchor_server" 2>/dev/null || true
wait "$anchor_server" 2>/dev/null || true
anchor_server=""
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
rps = lambda name: json.load(open(f"{work}/{name}"))["summary"]["requestsPerSec"]
for c in (1, 16, 64):
    ours, theirs = rps(f"small-c{c}.json"), rps(f"anchor-c{c}.json")
    print(f"ratio c={c}: verdict {ours:.0f} req/s / wasmtime serve {theirs:.0f} req/s = {ours / theirs:.2f}x")
PY

python3 host/server/bench/idle.py "${addr##*:}" "$server" "$idle"
