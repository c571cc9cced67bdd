"""The component's entry point: exports `verdict:verifier/completion`.

componentize-py looks for a class named after the exported interface.
"""

from wit_world import exports
from wit_world.imports import artifacts
from wit_world.imports.types import Packet, Verdict

import verifier


class Completion(exports.Completion):
    """The completion role, backed by the host's artifacts."""

    def check(self, packet: Packet) -> Verdict:
        return verifier.check(packet, artifacts.read)
