#!/usr/bin/env bash
# Instantiates a verifier template the way `verdict new-verifier` will:
#
#   instantiate.sh rust|python|js DIR [VERDICT_GUEST]
#
# VERDICT_GUEST (Rust only) is the TOML value of the verdict-guest dependency,
# by default a path dependency on this checkout's guest-sdk. See README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
lang="${1:-}"
dir="${2:-}"
[[ -d "$here/$lang" && -n "$dir" ]] || { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ ! -e "$dir" ]] || { echo "instantiate.sh: $dir already exists" >&2; exit 1; }

name="$(basename "$dir")"
[[ "$name" =~ ^[a-z][a-z0-9-]*$ ]] ||
    { echo "instantiate.sh: project name must match [a-z][a-z0-9-]*: $name" >&2; exit 1; }
crate_name="${name//-/_}"
verdict_guest="${3:-{ path = \"$repo/guest-sdk\" \}}"

mkdir -p "$dir"
(cd "$here/$lang" && find . -type f) | while read -r file; do
    target="$dir/${file%.tmpl}"
    mkdir -p "$(dirname "$target")"
    # `|` as the sed delimiter: paths and URLs contain `/`.
    sed -e "s|{{name}}|$name|g" -e "s|{{crate_name}}|$crate_name|g" \
        -e "s|{{verdict_guest}}|$verdict_guest|g" "$here/$lang/$file" >"$target"
done
if [[ "$lang" != rust ]]; then
    mkdir -p "$dir/wit"
    cp "$repo/wit/verdict-verifier@0.1.1/verifier.wit" "$dir/wit/verifier.wit"
fi
echo "created $lang verifier $name in $dir"
