"""Makes the generated WIT bindings importable in native tests.

`componentize-py bindings` writes the world's types as plain Python into a
temporary directory; the tests run the logic against them, no wasm host.
"""

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIT = Path(__file__).parent / "wit"


def _generate_bindings() -> None:
    out = tempfile.mkdtemp(prefix="verdict-bindings-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    subprocess.run(
        ["componentize-py", "-d", str(WIT), "-w", "warm-completion-checker", "bindings", out],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    sys.path.insert(0, out)


_generate_bindings()
