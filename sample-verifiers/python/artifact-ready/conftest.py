"""Makes the generated WIT bindings importable in native tests.

`componentize-py bindings` writes the world's types as plain Python; the
tests run the verifier's logic against them, with no wasm host. They go to a
temporary directory, so nothing generated lands in the source tree.
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The frozen WIT version this sample targets (see wit/README.md).
WIT_DEFAULT = Path(__file__).parents[3] / "wit" / "verdict-verifier@0.1.1"
WIT = Path(os.environ.get("VERDICT_WIT", WIT_DEFAULT))
WORLD = "warm-completion-checker"


def _generate_bindings() -> None:
    out = tempfile.mkdtemp(prefix="verdict-bindings-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    subprocess.run(
        ["componentize-py", "-d", str(WIT), "-w", WORLD, "bindings", out],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    sys.path.insert(0, out)


_generate_bindings()
