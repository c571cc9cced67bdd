#!/usr/bin/env bash
# A local Restate server for verdict's durable executions, tests and CI:
# the pinned restate-server and restate CLI from the npm registry,
# installed into $CARGO_TARGET_DIR/restate-tools (default target/), on
# 127.0.0.1 ports, with a data directory of its own.
#
#   restate-dev.sh install
#       Installs the pinned server and CLI with npm unless already there.
#   restate-dev.sh bin [restate-server|restate]
#       Prints the path of the native binary (exit 3 when not installed).
#   restate-dev.sh keygen FILE
#       Makes an Ed25519 request-identity private key in FILE (PEM, mode
#       600) unless FILE exists, and prints its public key as workers take
#       it: `publickeyv1_` and the base58 key (what restate-server logs as
#       "Loaded request identity key"). Needs openssl and python3.
#   restate-dev.sh run DIR INGRESS ADMIN NODE
#       Writes DIR/config.toml (data in DIR/data; the ingress, admin and
#       node ports on 127.0.0.1; short retry and inactivity timeouts so a
#       crashed worker is retried within a second; every request to a
#       worker signed with DIR/identity.pem, made by `keygen` when missing)
#       and execs the server in the foreground: the caller's child IS the
#       server (kill it to stop). RESTATE_DEV_UNSIGNED=1: no signing.
#       RESTATE_DEV_CA=FILE: the server trusts the PEM certificates in FILE
#       (a TLS worker's self-signed certificate, say).
#       RESTATE_DEV_NO_FSYNC=1: the log's write-ahead logs are not fsynced
#       (a measurement of the floor only: an entry then survives a crash of
#       the server process but not of the machine; the default fsyncs).
#   restate-dev.sh start DIR [INGRESS ADMIN NODE]
#       The same in the background (pid in DIR/pid, log in DIR/log; ports
#       8080, 9070, 5122 by default); waits until the admin API answers
#       (at most 30 s); prints the URLs and the public key workers need.
#   restate-dev.sh stop DIR
#       Stops what `start` started.
set -euo pipefail

# The server and CLI versions verdict-durable is tested with (restate-sdk
# 0.13 speaks service protocol v5 to v8; this server negotiates within it).
RESTATE_VERSION=1.7.12

root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
tools=$target/restate-tools

native() {
    local name=$1 arch
    case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "restate-dev.sh: no Restate build for $(uname -m)" >&2; return 1 ;;
    esac
    local os
    os=$(uname -s | tr '[:upper:]' '[:lower:]')
    local package=restate-server
    [[ $name == restate ]] && package=restate
    echo "$tools/node_modules/@restatedev/$package-$os-$arch/bin/$name"
}

installed() {
    local server
    server=$(native restate-server) || return 1
    [[ -x $server ]] && "$server" --version 2>/dev/null | grep -q "$RESTATE_VERSION"
}

install() {
    installed && return 0
    command -v npm >/dev/null || { echo "restate-dev.sh: npm is needed to install Restate" >&2; return 1; }
    mkdir -p "$tools"
    # No lifecycle scripts (a dependency's postinstall only reports usage).
    timeout 300 npm install --prefix "$tools" --no-audit --no-fund --ignore-scripts --loglevel=error \
        "@restatedev/restate-server@$RESTATE_VERSION" "@restatedev/restate@$RESTATE_VERSION" >&2
    installed
}

# The public key of the PEM private key $1, as `publickeyv1_<base58>`.
public_key() {
    command -v openssl >/dev/null || { echo "restate-dev.sh: openssl is needed for request identity keys" >&2; return 1; }
    command -v python3 >/dev/null || { echo "restate-dev.sh: python3 is needed for request identity keys" >&2; return 1; }
    # The last 32 bytes of the DER SubjectPublicKeyInfo are the raw key.
    openssl pkey -in "$1" -pubout -outform DER | tail -c 32 | python3 -c '
import sys
raw = sys.stdin.buffer.read()
if len(raw) != 32:
    sys.exit("restate-dev.sh: not an Ed25519 key")
alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
n, text = int.from_bytes(raw, "big"), ""
while n:
    n, r = divmod(n, 58)
    text = alphabet[r] + text
print("publickeyv1_" + "1" * (len(raw) - len(raw.lstrip(b"\0"))) + text)'
}

keygen() {
    local file=$1
    if [[ ! -e $file ]]; then
        command -v openssl >/dev/null || { echo "restate-dev.sh: openssl is needed for request identity keys" >&2; return 1; }
        (umask 077 && openssl genpkey -algorithm ed25519 -outform pem -out "$file")
    fi
    public_key "$file"
}

configure() {
    local dir=$1 ingress=$2 admin=$3 node=$4
    for port in "$ingress" "$admin" "$node"; do
        [[ $port =~ ^[0-9]+$ ]] || { echo "restate-dev.sh: ports must be numbers" >&2; exit 2; }
    done
    mkdir -p "$dir/data"
    local identity=""
    if [[ ${RESTATE_DEV_UNSIGNED:-0} != 1 ]]; then
        keygen "$dir/identity.pem" >/dev/null
        identity="request-identity-private-key-pem-file = \"$dir/identity.pem\""
    fi
    local fsync=""
    if [[ ${RESTATE_DEV_NO_FSYNC:-0} == 1 ]]; then
        fsync=$'[log-server]\nrocksdb-disable-wal-fsync = true\n\n[bifrost.local]\nrocksdb-disable-wal-fsync = true\n'
    fi
    cat >"$dir/config.toml" <<TOML
roles = ["http-ingress", "admin", "worker", "log-server", "metadata-server"]
node-name = "verdict-dev"
base-dir = "$dir/data"
listen-mode = "tcp"
bind-address = "127.0.0.1:$node"
advertised-address = "http://127.0.0.1:$node/"
default-num-partitions = 4
disable-telemetry = true
log-filter = "warn"
# Several servers run at once in the tests: a smaller RocksDB budget than
# the 2 GiB default.
rocksdb-total-memory-size = "512.0 MiB"

# A worker that died is retried quickly and for a long time (the tests
# start the next one within seconds).
[default-retry-policy]
initial-interval = "100ms"
exponentiation-factor = 1.5
max-interval = "500ms"
max-attempts = 100000
on-max-attempts = "pause"

[worker.invoker]
inactivity-timeout = "5s"
abort-timeout = "10s"
connect-timeout = "1s"
# Every request to a worker signed (workers verify it with the public key).
$identity

[admin]
bind-address = "127.0.0.1:$admin"
disable-web-ui = true

[ingress]
bind-address = "127.0.0.1:$ingress"

$fsync
TOML
}

wait_up() {
    local port=$1
    for _ in $(seq 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "restate-dev.sh: nothing answers on 127.0.0.1:$port after 30 s" >&2
    return 1
}

# The server's environment: the certificates it trusts besides the system's.
server_env() {
    if [[ -n ${RESTATE_DEV_CA:-} ]]; then
        export SSL_CERT_FILE=$RESTATE_DEV_CA
    fi
}

case "${1:-}" in
install)
    install
    ;;
keygen)
    [[ $# -eq 2 ]] || { echo "usage: $0 keygen FILE" >&2; exit 2; }
    keygen "$2"
    ;;
bin)
    installed || exit 3
    native "${2:-restate-server}"
    ;;
run)
    shift
    [[ $# -eq 4 ]] || { echo "usage: $0 run DIR INGRESS ADMIN NODE" >&2; exit 2; }
    installed || { echo "restate-dev.sh: not installed: run $0 install" >&2; exit 3; }
    configure "$@"
    server_env
    exec "$(native restate-server)" --no-logo --config-file "$1/config.toml"
    ;;
start)
    shift
    [[ $# -eq 1 || $# -eq 4 ]] || { echo "usage: $0 start DIR [INGRESS ADMIN NODE]" >&2; exit 2; }
    installed || { echo "restate-dev.sh: not installed: run $0 install" >&2; exit 3; }
    dir=$1 ingress=${2:-8080} admin=${3:-9070} node=${4:-5122}
    configure "$dir" "$ingress" "$admin" "$node"
    server_env
    "$(native restate-server)" --no-logo --config-file "$dir/config.toml" </dev/null >"$dir/log" 2>&1 &
    echo $! >"$dir/pid"
    wait_up "$admin"
    echo "ingress http://127.0.0.1:$ingress admin http://127.0.0.1:$admin"
    if [[ ${RESTATE_DEV_UNSIGNED:-0} != 1 ]]; then
        echo "identity $(public_key "$dir/identity.pem")   # [restate] identity_keys = [\"…\"]"
    fi
    ;;
stop)
    [[ $# -ge 2 ]] || { echo "usage: $0 stop DIR" >&2; exit 2; }
    if [[ -f $2/pid ]]; then
        pid=$(cat "$2/pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        rm -f "$2/pid"
    fi
    ;;
*)
    echo "usage: $0 install | bin [restate-server|restate] | keygen FILE | run DIR INGRESS ADMIN NODE | start DIR [INGRESS ADMIN NODE] | stop DIR" >&2
    exit 2
    ;;
esac
