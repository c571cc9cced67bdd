#!/usr/bin/env bash
# A local OCI registry for verdict's tests and CI: Debian's docker-registry
# (the CNCF distribution registry, v2.8), on 127.0.0.1, storing into a
# directory of its own, with or without htpasswd basic auth.
#
#   registry-dev.sh install
#       Installs docker-registry, skopeo and apache2-utils (htpasswd) with
#       apt when one is missing (pinned to the versions tested, else the
#       candidate). Needs root.
#   registry-dev.sh run DIR PORT [USER PASSWORD]
#       Writes DIR/config.yml (storage DIR/data, htpasswd DIR/htpasswd when
#       USER is given, HTTPS when DIR/tls.crt and DIR/tls.key exist) and
#       execs the registry in the foreground: the caller's child IS the
#       registry (kill it to stop it).
#   registry-dev.sh start DIR PORT [USER PASSWORD]
#       The same in the background (pid in DIR/pid, log in DIR/log); waits
#       until the port answers (at most 10 s).
#   registry-dev.sh stop DIR
#       Stops what `start` started.
#
# Debian's registry 2.8.2 serves htpasswd auth over plain HTTP (it does not
# require TLS for it), so no certificate is needed on loopback; the TLS
# tests give it a self-signed one (tls.crt, tls.key) all the same.
set -euo pipefail

PINNED=(docker-registry=2.8.2+ds1-1 skopeo=1.9.3+ds1-1+b10 apache2-utils)

install() {
    if command -v docker-registry >/dev/null && command -v skopeo >/dev/null &&
        command -v htpasswd >/dev/null; then
        return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${PINNED[@]}" ||
        apt-get install -y -qq --no-install-recommends docker-registry skopeo apache2-utils
}

configure() {
    local dir=$1 port=$2 user=${3:-} password=${4:-}
    if [[ ! $port =~ ^[0-9]+$ ]]; then
        echo "registry-dev.sh: PORT must be a number" >&2
        exit 2
    fi
    mkdir -p "$dir/data"
    local auth=""
    if [[ -n $user ]]; then
        htpasswd -Bbn "$user" "$password" >"$dir/htpasswd"
        auth="auth:
  htpasswd:
    realm: verdict-dev
    path: $dir/htpasswd"
    fi
    local tls=""
    if [[ -f $dir/tls.crt && -f $dir/tls.key ]]; then
        tls="  tls:
    certificate: $dir/tls.crt
    key: $dir/tls.key"
    fi
    cat >"$dir/config.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
  secret: verdict-dev-only
$tls
$auth
YAML
}

wait_up() {
    local port=$1
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "registry-dev.sh: nothing answers on 127.0.0.1:$port after 10 s" >&2
    return 1
}

case "${1:-}" in
install)
    install
    ;;
run)
    shift
    [[ $# -ge 2 ]] || { echo "usage: $0 run DIR PORT [USER PASSWORD]" >&2; exit 2; }
    configure "$@"
    exec docker-registry serve "$1/config.yml"
    ;;
start)
    shift
    [[ $# -ge 2 ]] || { echo "usage: $0 start DIR PORT [USER PASSWORD]" >&2; exit 2; }
    configure "$@"
    docker-registry serve "$1/config.yml" </dev/null >"$1/log" 2>&1 &
    echo $! >"$1/pid"
    wait_up "$2"
    echo "127.0.0.1:$2"
    ;;
stop)
    [[ $# -ge 2 ]] || { echo "usage: $0 stop DIR" >&2; exit 2; }
    if [[ -f $2/pid ]]; then
        pid=$(cat "$2/pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        rm -f "$2/pid"
    fi
    ;;
*)
    echo "usage: $0 install | run DIR PORT [USER PASSWORD] | start DIR PORT [USER PASSWORD] | stop DIR" >&2
    exit 2
    ;;
esac
