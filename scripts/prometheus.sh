#!/usr/bin/env bash
# A Prometheus for the scrape test of `verdict serve` (and by hand): the
# pinned Debian package, unpacked without root into a cache directory,
# $VERDICT_PROMETHEUS_DIR (default target/prometheus under the repository),
# kept across runs.
#
#   prometheus.sh [install]
#       Installs the pinned version unless it is there; prints the path of
#       the prometheus binary as its last line. Exit 3: it cannot be
#       installed here (no apt, or the package cannot be downloaded).
#   prometheus.sh bin
#       Prints the binary's path (exit 3 when not installed).
#
# How: `apt-get download prometheus=VERSION` (no root needed; when the
# package lists are missing and this runs as root, `apt-get update` once),
# then `dpkg -x` of the .deb into DIR/VERSION. Nothing is installed into
# the system.
set -euo pipefail

# Pinned upstream version; any Debian revision of it (Debian replaces a
# revision by its security updates, e.g. +b6 by +deb12u1, and the archive
# then serves only the new one).
VERSION="2.42.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${VERDICT_PROMETHEUS_DIR:-$ROOT/target/prometheus}"
DEST="$DIR/$VERSION"
BIN="$DEST/usr/bin/prometheus"

installed() {
    [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1
}

cannot() {
    echo "prometheus.sh: $*" >&2
    exit 3
}

case "${1:-install}" in
bin)
    installed || cannot "prometheus $VERSION is not installed in $DEST (run: $0 install)"
    echo "$BIN"
    ;;
install)
    if ! installed; then
        command -v apt-get >/dev/null || cannot "no apt-get here"
        command -v dpkg >/dev/null || cannot "no dpkg here"
        mkdir -p "$DIR"
        work="$(mktemp -d "$DIR/download.XXXXXX")"
        trap 'rm -rf "$work"' EXIT
        download() { (cd "$work" && apt-get download -q prometheus >&2); }
        if ! download; then
            if [ "$(id -u)" = 0 ]; then
                echo "prometheus.sh: refreshing the package lists (apt-get update)" >&2
                apt-get update -q >&2 || cannot "apt-get update failed"
                download || cannot "cannot download prometheus"
            else
                cannot "cannot download prometheus (the package lists may need apt-get update)"
            fi
        fi
        deb="$(ls "$work"/prometheus_*.deb)"
        got="$(dpkg-deb -f "$deb" Version)"
        case "$got" in
        "$VERSION"+*) ;;
        *) cannot "the archive's prometheus is $got, not $VERSION (update VERSION in $0 after checking the test)" ;;
        esac
        rm -rf "$DEST.partial"
        dpkg -x "$deb" "$DEST.partial"
        [ -x "$DEST.partial/usr/bin/prometheus" ] || cannot "the package holds no usr/bin/prometheus"
        rm -rf "$DEST"
        mv "$DEST.partial" "$DEST"
        installed || cannot "the unpacked prometheus does not run"
        echo "prometheus.sh: installed $("$BIN" --version 2>&1 | head -1) into $DEST" >&2
    fi
    echo "$BIN"
    ;;
*)
    echo "usage: $0 [install|bin]" >&2
    exit 2
    ;;
esac
