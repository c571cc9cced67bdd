#!/usr/bin/env bash
# The Python package's tests, installed the way a user installs it: a venv
# under target/python-venv (or $VERDICT_PYTHON_VENV) with the pinned test
# dependencies (python/requirements-test.txt: openai-agents, langgraph,
# pytest), set up again only when that file changes; the package itself
# installed from python/ with `pip install ./python` (not editable) on every
# run; then pytest against the real `verdict` binary.
#
# Usage: VERDICT_BIN=PATH/TO/verdict bash scripts/python-dev.sh [PYTEST ARGS...]
# (without VERDICT_BIN: builds the verdict-cli binary). Needs python3 >= 3.10
# and PyPI. Exit 3 when the venv cannot be set up (no python3, no network);
# otherwise pytest's exit code. Bounded: 10 minutes for the install, 10 for
# the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
if [[ -z "${VERDICT_BIN:-}" ]]; then
    cargo build -q -p verdict-cli --bin verdict --locked
    target_dir="${CARGO_TARGET_DIR:-$root/target}"
    [[ "$target_dir" = /* ]] || target_dir="$root/$target_dir"
    export VERDICT_BIN="$target_dir/debug/verdict"
fi
venv="${VERDICT_PYTHON_VENV:-$root/target/python-venv}"
requirements="$root/python/requirements-test.txt"
stamp="$venv/requirements.installed"
if ! cmp -s "$requirements" "$stamp" 2>/dev/null; then
    rm -rf "$venv"
    if ! command -v python3 >/dev/null || ! python3 -m venv "$venv" \
        || ! timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check \
            --no-input -r "$requirements"; then
        echo "python-dev: cannot set up the venv (python3 -m venv, pip install -r python/requirements-test.txt)" >&2
        rm -rf "$venv"
        exit 3
    fi
    cp "$requirements" "$stamp"
fi
# The package from its source tree, as a user installs it: a wheel built
# from python/ into site-packages (not editable), again on every run.
if ! timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
    --force-reinstall --no-deps ./python; then
    echo "python-dev: cannot install the package (pip install ./python)" >&2
    exit 3
fi
cd "$root/python/tests"
timeout 600 "$venv/bin/python" -m pytest -p no:cacheprovider "$@"
