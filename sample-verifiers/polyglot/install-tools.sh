#!/usr/bin/env bash
# Installs the pinned Python and JavaScript component toolchains from the
# package registries (PyPI, npm) into a cache outside the tracked tree.
#
#   install-tools.sh [--wasm-tools]
#
# Cache: $VERDICT_TOOLS_DIR, default <repo>/target/polyglot-tools. Idempotent:
# each part is reinstalled only when its pin file changed, so a second run
# takes well under a second. Prints nothing on success unless it installed.
#
#   py/   virtualenv: componentize-py, pytest   (pins: tools/requirements.txt)
#   js/   npm ci: componentize-js, jco          (pins: tools/package*.json)
#   wasm-tools/  only with --wasm-tools: `cargo install --locked wasm-tools`
#                (used for FINDINGS.md, not for building)
#
# Needs python3 >= 3.11 (the generated bindings use typing.Self), node >= 20
# and npm; --wasm-tools needs cargo.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tools="${VERDICT_TOOLS_DIR:-$repo/target/polyglot-tools}"
pins="$here/tools"

# wasm-tools: the version, and the features FINDINGS.md uses (`component wit`,
# `print --skeleton`); fewer features build in a fraction of the time.
WASM_TOOLS_VERSION=1.263.0
WASM_TOOLS_FEATURES=component,print,parse,validate,objdump,metadata

want_wasm_tools=false
for arg in "$@"; do
    case "$arg" in
        --wasm-tools) want_wasm_tools=true ;;
        -h | --help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-tools.sh: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

die() { echo "install-tools.sh: $*" >&2; exit 1; }

# A stamp holds the hash of the pin files an install was made from.
stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
up_to_date() { [[ -f "$1" && "$(cat "$1")" == "$2" ]]; }

mkdir -p "$tools"

install_python() {
    local stamp="$tools/py/.verdict-stamp" want
    want="$(stamp_of "$pins/requirements.txt")"
    up_to_date "$stamp" "$want" && return 0
    command -v python3 >/dev/null || die "python3 not found"
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        die "python3 >= 3.11 needed, found $(python3 --version)"
    echo "installing Python toolchain into $tools/py" >&2
    rm -rf "$tools/py"
    python3 -m venv "$tools/py"
    "$tools/py/bin/pip" install --quiet --disable-pip-version-check \
        --no-deps --requirement "$pins/requirements.txt"
    echo "$want" >"$stamp"
}

install_js() {
    local stamp="$tools/js/.verdict-stamp" want
    want="$(stamp_of "$pins/package.json" "$pins/package-lock.json")"
    up_to_date "$stamp" "$want" && return 0
    command -v npm >/dev/null || die "npm not found"
    node -e 'process.exit(Number(process.versions.node.split(".")[0] < 20))' ||
        die "node >= 20 needed, found $(node --version)"
    echo "installing JavaScript toolchain into $tools/js" >&2
    rm -rf "$tools/js"
    mkdir -p "$tools/js"
    cp "$pins/package.json" "$pins/package-lock.json" "$tools/js/"
    (cd "$tools/js" && npm ci --silent --no-audit --no-fund)
    echo "$want" >"$stamp"
}

install_wasm_tools() {
    local stamp="$tools/wasm-tools/.verdict-stamp" want
    want="$WASM_TOOLS_VERSION $WASM_TOOLS_FEATURES"
    up_to_date "$stamp" "$want" && return 0
    command -v cargo >/dev/null || die "cargo not found"
    echo "installing wasm-tools $WASM_TOOLS_VERSION into $tools/wasm-tools (a few minutes)" >&2
    cargo install --locked --quiet "wasm-tools@$WASM_TOOLS_VERSION" \
        --no-default-features --features "$WASM_TOOLS_FEATURES" \
        --root "$tools/wasm-tools"
    echo "$want" >"$stamp"
}

install_python
install_js
if $want_wasm_tools; then install_wasm_tools; fi
