#!/usr/bin/env bash
# The real Claude Code from the npm registry (a native binary in the
# package), pinned, cached in target/claude-code (nothing global is
# installed). The hook tests run it in print mode against verdict's fake
# provider (ANTHROPIC_BASE_URL).
#   scripts/claude-code.sh install   installs it (idempotent)
#   scripts/claude-code.sh bin       prints the path of the `claude` binary
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${VERDICT_CLAUDE_CODE_DIR:-$PWD/target/claude-code}"
package="@anthropic-ai/claude-code@2.1.332"

case "${1:-}" in
install)
    if [[ -f "$dir/.installed" ]] && [[ "$(cat "$dir/.installed")" == "$package" ]]; then
        exit 0
    fi
    command -v npm >/dev/null || { echo "error: npm is needed to install Claude Code" >&2; exit 1; }
    mkdir -p "$dir"
    [[ -f "$dir/package.json" ]] || echo '{"private":true}' > "$dir/package.json"
    (cd "$dir" && timeout 900 npm install --no-audit --no-fund --silent "$package")
    "$dir/node_modules/.bin/claude" --version >/dev/null
    echo "$package" > "$dir/.installed"
    ;;
bin)
    echo "$dir/node_modules/.bin/claude"
    ;;
*)
    echo "usage: $0 install | bin" >&2
    exit 2
    ;;
esac
