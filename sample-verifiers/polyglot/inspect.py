#!/usr/bin/env python3
"""Summarizes components for FINDINGS.md, with wasm-tools.

    inspect.py [--wasm-tools PATH] COMPONENT.wasm...

Per component: size, imports and exports (`wasm-tools component wit`), and
from `wasm-tools print --skeleton`: core modules, core instances (module
instantiations vs. bags of exports, which create nothing at run time), and
the memories and tables those instantiations define (imports excluded).
Nested components are not descended into (componentize-py/-js emit few,
tiny shims). wasmtime's own counts can be higher: it adds instances of its
own adapter modules for lowered imports.
"""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

TOOLS = Path(
    os.environ.get(
        "VERDICT_TOOLS_DIR", Path(__file__).resolve().parents[2] / "target" / "polyglot-tools"
    )
)
NAME = r'(\$"[^"]*"|\$[^\s()]+|\d+)'
MODULE = re.compile(r"^  \(core module " + NAME)
INSTANCE = re.compile(r"^  \(core instance ")
INSTANTIATE = re.compile(r"\(instantiate " + NAME)
WORLD_ITEM = re.compile(r"^  (import|export) ([^;]+?)(:? interface \{|;)$")


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def world_items(wasm_tools: str, path: Path) -> tuple[list[str], list[str]]:
    """The root world's imports and exports."""
    imports, exports = [], []
    for line in run(wasm_tools, "component", "wit", str(path)).splitlines():
        if line.startswith("}"):
            break
        if match := WORLD_ITEM.match(line):
            kind, name = match.group(1), match.group(2).rstrip(":")
            (imports if kind == "import" else exports).append(name)
    return imports, exports


def core_counts(wasm_tools: str, path: Path) -> dict[str, int]:
    """Modules, instances, and memories/tables defined by instantiations."""
    text = run(wasm_tools, "print", "--skeleton", str(path)).splitlines()
    defined: dict[str, tuple[int, int]] = {}  # module -> (memories, tables)
    modules = instances = instantiations = memories = tables = 0
    current = None
    for line in text:
        if match := MODULE.match(line):
            modules += 1
            current = match.group(1)
            defined[current] = (0, 0)
            continue
        if current is not None:
            if line == "  )":
                current = None
                continue
            stripped = line.strip()
            mem, tab = defined[current]
            if stripped.startswith("(memory "):
                defined[current] = (mem + 1, tab)
            elif stripped.startswith("(table "):
                defined[current] = (mem, tab + 1)
            continue
        if INSTANCE.match(line):
            instances += 1
            # wasm-tools prints `(instantiate $module` on the instance's line;
            # an instance without it is a bag of exports.
            if match := INSTANTIATE.search(line):
                instantiations += 1
                mem, tab = defined.get(match.group(1), (0, 0))
                memories += mem
                tables += tab
    return {
        "core modules": modules,
        "core instances": instances,
        "module instantiations": instantiations,
        "memories defined": memories,
        "tables defined": tables,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wasm-tools", default=str(TOOLS / "wasm-tools" / "bin" / "wasm-tools"))
    parser.add_argument("components", nargs="+", type=Path)
    args = parser.parse_args()
    for path in args.components:
        imports, exports = world_items(args.wasm_tools, path)
        print(f"## {path.name}")
        print(f"size: {path.stat().st_size:,} bytes ({path.stat().st_size / 2**20:.1f} MiB)")
        for key, value in core_counts(args.wasm_tools, path).items():
            print(f"{key}: {value}")
        print(f"imports ({len(imports)}): {', '.join(imports)}")
        print(f"exports ({len(exports)}): {', '.join(exports)}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
