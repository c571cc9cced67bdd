#!/usr/bin/env bash
# The AMOS-equivalent console loop, offline and deterministic.
#
# 1. The host requires a publish receipt (sample verifier receipt-required).
#    The scripted model claims "published" twice without writing anything:
#    feedback once, then the checkpoint is blocked (phase input-needed),
#    which `/context loop` shows as missing evidence, not as an approval.
# 2. The host supplies a fresh verifier on disk (artifact-ready) and runs
#    `/verifier reload`; the next task reads A42 and is verified complete.
# Everything lives in a temporary directory removed at the end.
#
# Run from the repository root: bash examples/console-loop/run.sh
# (uses $VERDICT if set, else builds and runs target/debug/verdict).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ -z "${VERDICT:-}" ]]; then
    cargo build -q -p verdict-cli --manifest-path "$root/Cargo.toml"
    target_dir="${CARGO_TARGET_DIR:-$root/target}"
    [[ "$target_dir" = /* ]] || target_dir="$PWD/$target_dir"
    VERDICT="$target_dir/debug/verdict"
fi
guests="$root/target/wasm-guests/wasm32-wasip2/release"

work="$(mktemp -d)"
fake_pid=""
cleanup() {
    if [[ -n "$fake_pid" ]]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
    rm -rf "$work"
    echo "cleaned up $work"
}
trap cleanup EXIT

mkdir "$work/workspace"
echo '{"id":"A42","ready":true}' > "$work/workspace/A42"
cp "$guests/receipt_required.wasm" "$work/verifier.wasm"

# The scripted model on loopback; its first line is the OpenAI chat base URL.
"$VERDICT" fake-provider --script "$here/script.json" > "$work/urls" &
fake_pid=$!
for _ in $(seq 100); do
    grep -q OpenAiChat "$work/urls" 2>/dev/null && break
    sleep 0.05
done
base_url="$(awk '/^OpenAiChat/ {print $2}' "$work/urls")"

cat > "$work/verdict.toml" <<TOML
[connectors.scripted]
protocol = "openai-chat"
base_url = "$base_url"
no_api_key = true

[agent]
connector = "scripted"
model = "scripted-console"
max_iterations = 6

[tools]
workspace = "workspace"
builtin = ["read_artifact", "list_artifacts"]

[loop_policy]
max_recovery_attempts = 1

[tenants.acme]
artifact_root = "workspace"
completion = "verifier.wasm"
TOML

# The session. Tasks run to their end before the next line is read (input
# is not a terminal); the host swaps the verifier between the two tasks.
{
    echo "Publish artifact A42."
    echo "/context loop"
    echo "/save $work/blocked.json"
    # The saved file proves the first task ended: only now swap the verifier.
    for _ in $(seq 600); do [[ -s "$work/blocked.json" ]] && break; sleep 0.05; done
    cp "$guests/artifact_ready.wasm" "$work/verifier.wasm"
    echo "/verifier reload"
    echo "/policy show"
    echo "Verify that artifact A42 is ready."
    echo "/context loop"
    echo "/save $work/conversation.json"
    echo "/quit"
} | "$VERDICT" console --config "$work/verdict.toml" --no-cache
