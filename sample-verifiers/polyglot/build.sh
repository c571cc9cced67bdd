#!/usr/bin/env bash
# Builds the Python and JavaScript `artifact-ready` verifiers into components.
#
#   build.sh [--only python|js] [--minimal] [--floor] [--test] [--smoke] OUT_DIR
#
# Installs the pinned toolchains first (install-tools.sh; cached), then writes
#   OUT_DIR/artifact-ready-python.wasm   componentize-py, default options
#   OUT_DIR/artifact-ready-js.wasm       componentize-js, default options
# Default options keep the WASI imports the toolchains choose (the host links
# wasi:filesystem, wasi:sockets and wasi:http deny-all); see FINDINGS.md.
#
#   --only L    build one language (python or js)
#   --minimal   also build the minimal variants, for comparison:
#               *-minimal.wasm (Python --stub-wasi; JS with every WASI feature
#               disabled, whose traps carry no message)
#   --floor     also build empty-python.wasm and empty-js.wasm (floor/):
#               checks that answer at once, so the sandbox benchmark shows
#               each toolchain's per-check cost before any verifier logic
#   --test      run each sample's native tests (pytest, node --test) first
#   --smoke     then run the built components under Node (jco transpile) on
#               the repository's example packets: a check of the wasm builds
#               that needs no verdict host
# Each step prints its wall time to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tools="${VERDICT_TOOLS_DIR:-$repo/target/polyglot-tools}"
wit="$repo/wit/verdict-verifier@0.1.1"
world=warm-completion-checker
samples="$repo/sample-verifiers"

usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

langs=(python js)
minimal=false
floor=false
run_tests=false
smoke=false
out=""
while (($#)); do
    case "$1" in
        --only)
            [[ "${2:-}" == python || "${2:-}" == js ]] || { usage >&2; exit 2; }
            langs=("$2")
            shift
            ;;
        --minimal) minimal=true ;;
        --floor) floor=true ;;
        --test) run_tests=true ;;
        --smoke) smoke=true ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "build.sh: unknown option: $1" >&2; usage >&2; exit 2 ;;
        *)
            [[ -z "$out" ]] || { echo "build.sh: one OUT_DIR only" >&2; exit 2; }
            out="$1"
            ;;
    esac
    shift
done
[[ -n "$out" ]] || { usage >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"

"$here/install-tools.sh"
export PATH="$tools/py/bin:$tools/js/node_modules/.bin:$PATH"
# No __pycache__ or .pytest_cache in the source tree.
export PYTHONDONTWRITEBYTECODE=1

# Runs a command and reports its wall time: timed LABEL CMD...
timed() {
    local label="$1" start tenths
    shift
    start=$(date +%s%N)
    "$@"
    tenths=$((($(date +%s%N) - start) / 100000000))
    printf '%-36s %4d.%d s\n' "$label" $((tenths / 10)) $((tenths % 10)) >&2
}

build_python() {
    local src="$samples/python/artifact-ready" stage
    if $run_tests; then
        timed "python: native tests" \
            bash -c "cd '$src' && python -m pytest -q -p no:cacheprovider"
    fi
    # componentize-py writes __pycache__ beside the sources it loads: build
    # from a staged copy of the app (tests and conftest stay out).
    stage="$(mktemp -d)"
    trap 'rm -rf "$stage"' RETURN
    find "$src" -maxdepth 1 -name '*.py' ! -name 'test_*' ! -name conftest.py \
        -exec cp {} "$stage/" \;
    timed "python: componentize (default)" \
        componentize-py -q -d "$wit" -w "$world" componentize -p "$stage" app \
        -o "$out/artifact-ready-python.wasm"
    if $minimal; then
        timed "python: componentize (--stub-wasi)" \
            componentize-py -q -d "$wit" -w "$world" componentize -p "$stage" app \
            --stub-wasi -o "$out/artifact-ready-python-minimal.wasm"
    fi
    if $floor; then
        rm -f "$stage"/*.py
        cp "$here/floor/python/app.py" "$stage/"
        timed "python: componentize (empty check)" \
            componentize-py -q -d "$wit" -w "$world" componentize -p "$stage" app \
            -o "$out/empty-python.wasm"
    fi
}

build_js() {
    local src="$samples/js/artifact-ready"
    if $run_tests; then
        timed "js: native tests" bash -c "cd '$src' && node --test"
    fi
    timed "js: componentize (default)" \
        componentize-js "$src/src/component.js" --wit "$wit" -n "$world" \
        -o "$out/artifact-ready-js.wasm"
    if $minimal; then
        timed "js: componentize (-d all)" \
            componentize-js "$src/src/component.js" --wit "$wit" -n "$world" \
            -d stdio random clocks http fetch-event \
            -o "$out/artifact-ready-js-minimal.wasm"
    fi
    if $floor; then
        timed "js: componentize (empty check)" \
            componentize-js "$here/floor/js/component.js" --wit "$wit" -n "$world" \
            -o "$out/empty-js.wasm"
    fi
}

for lang in "${langs[@]}"; do
    "build_$lang"
done

if $smoke; then
    components=()
    for lang in "${langs[@]}"; do
        components+=("$out/artifact-ready-$lang.wasm")
        if $minimal; then components+=("$out/artifact-ready-$lang-minimal.wasm"); fi
    done
    # Node 20 needs the flag for the extended-const instructions in
    # componentize-js output.
    node --experimental-wasm-extended-const --no-warnings "$here/smoke.mjs" \
        --tools "$tools" --examples "$repo/examples" "${components[@]}"
fi
