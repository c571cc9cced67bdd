#!/usr/bin/env bash
# Checks `verdict fake-provider` with the official openai, anthropic and
# google-genai SDKs (check.py; pinned in requirements.txt).
#
# Usage: bash host/providers/sdk-check/run.sh [PATH/TO/verdict]
# (default: builds and uses the `verdict` binary of the verdict-cli package,
# in $CARGO_TARGET_DIR or target/). Needs python3 >= 3.11 and PyPI. The SDKs
# go into a venv under target/sdk-check/ (or $VERDICT_SDK_VENV), set up again
# only when requirements.txt changes.
# Bounded: 10 minutes for the install, 5 for the check.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
verdict="${1:-}"
if [[ -z "$verdict" ]]; then
    cargo build -q -p verdict-cli --locked --manifest-path "$root/Cargo.toml"
    target_dir="${CARGO_TARGET_DIR:-$root/target}"
    [[ "$target_dir" = /* ]] || target_dir="$PWD/$target_dir"
    verdict="$target_dir/debug/verdict"
fi

venv="${VERDICT_SDK_VENV:-$root/target/sdk-check/venv}"
stamp="$venv/requirements.installed"
if ! cmp -s "$here/requirements.txt" "$stamp" 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check \
        --no-input -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi
timeout 300 "$venv/bin/python" "$here/check.py" "$verdict"
