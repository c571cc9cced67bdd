#!/usr/bin/env bash
# The MCP servers the MCP tests run against, pinned: the reference servers
# from npm and mcp-server-time from PyPI (in a venv), cached in
# target/mcp-tools (nothing global is installed).
#   scripts/mcp-dev.sh install     installs them (idempotent)
#   scripts/mcp-dev.sh bin NAME    prints the path of an installed server's entry point
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${VERDICT_MCP_TOOLS_DIR:-$PWD/target/mcp-tools}"
everything="@modelcontextprotocol/server-everything@2026.8.31"
filesystem="@modelcontextprotocol/server-filesystem@2026.8.31"
time="mcp-server-time==2026.10.19"

case "${1:-}" in
install)
    if [[ -f "$dir/.installed" ]] && [[ "$(cat "$dir/.installed")" == "$everything $filesystem $time" ]]; then
        exit 0
    fi
    command -v npm >/dev/null || { echo "error: npm is needed to install the MCP servers" >&2; exit 1; }
    mkdir -p "$dir"
    [[ -f "$dir/package.json" ]] || echo '{"private":true}' > "$dir/package.json"
    (cd "$dir" && timeout 600 npm install --no-audit --no-fund --silent "$everything" "$filesystem")
    command -v python3 >/dev/null || { echo "error: python3 is needed to install mcp-server-time" >&2; exit 1; }
    [[ -x "$dir/venv/bin/pip" ]] || python3 -m venv "$dir/venv"
    timeout 600 "$dir/venv/bin/pip" install --quiet --disable-pip-version-check "$time"
    echo "$everything $filesystem $time" > "$dir/.installed"
    ;;
bin)
    case "${2:-}" in
    server-everything) echo "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ;;
    server-filesystem) echo "$dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ;;
    mcp-server-time) echo "$dir/venv/bin/mcp-server-time" ;;
    *) echo "usage: $0 bin server-everything|server-filesystem|mcp-server-time" >&2; exit 2 ;;
    esac
    ;;
*)
    echo "usage: $0 install | bin NAME" >&2
    exit 2
    ;;
esac
