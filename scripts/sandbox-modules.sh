#!/usr/bin/env bash
# The sandbox's module graph, from its `use` paths (grep, no build): prints
# one edge per line, "from -> to", at the level asked, and exits 1 when the
# graph has a loop (found by `tsort`).
#
#   scripts/sandbox-modules.sh            # folders: load -> call, ...
#   scripts/sandbox-modules.sh --files    # modules: load::cache -> fsutil, ...
#
# An edge is a path `crate::a::b` (or `super::b`) on a line that is not a
# comment, in a module other than the one it names. A module declaring its
# children (`mod x;`) is not an edge.
set -euo pipefail
cd "$(dirname "$0")/../host/sandbox/src"

level=folders
[[ "${1:-}" == "--files" ]] && level=files

# The module path of a file: load/cache.rs -> load::cache, load/mod.rs -> load.
module_of() {
    local f=${1%.rs}
    f=${f%/mod}
    echo "${f//\//::}"
}

# The module a path `a::b::c` names: the longest prefix that is a file.
resolve() {
    local path=$1 best="" prefix=""
    IFS=':' read -ra parts <<<"${path//::/:}"
    for part in "${parts[@]}"; do
        prefix=${prefix:+$prefix/}$part
        if [[ -f "$prefix.rs" || -f "$prefix/mod.rs" ]]; then
            best=${prefix//\//::}
        else
            break
        fi
    done
    echo "$best"
}

# The node a module is drawn as at the chosen level.
node() {
    if [[ $level == folders ]]; then echo "${1%%::*}"; else echo "$1"; fi
}

edges=$(
    find . -name '*.rs' ! -name lib.rs | sed 's|^\./||' | sort | while read -r file; do
        from=$(module_of "$file")
        parent=${from%::*}
        [[ "$parent" == "$from" ]] && parent=""
        { grep -v '^\s*//' "$file" || true; } |
            { grep -oE '\b(crate|super)::[a-z_0-9]+(::[a-z_0-9]+)*' || true; } |
            sort -u |
            while read -r path; do
                case $path in
                    crate::*) target=$(resolve "${path#crate::}") ;;
                    super::*) target=$(resolve "${parent:+$parent::}${path#super::}") ;;
                esac
                [[ -z "$target" ]] && continue
                a=$(node "$from")
                b=$(node "$target")
                # Within one node, and a module reaching into its own
                # children (or its parent's items, via `super::`), are not
                # edges of the graph.
                [[ "$a" == "$b" || "$b" == "$a::"* || "$a" == "$b::"* ]] && continue
                echo "$a -> $b"
            done
    done | sort -u
)

echo "$edges"
if ! awk '{print $1, $3}' <<<"$edges" | tsort >/dev/null 2>/tmp/sandbox-modules.$$; then
    echo "error: the sandbox's module graph has a loop:" >&2
    grep -v 'input contains a loop' /tmp/sandbox-modules.$$ | sed 's/^tsort: /  /' >&2
    rm -f /tmp/sandbox-modules.$$
    exit 1
fi
rm -f /tmp/sandbox-modules.$$
echo "no loop ($level: $(awk '{print $1; print $3}' <<<"$edges" | sort -u | wc -l) nodes, $(wc -l <<<"$edges") edges)"
