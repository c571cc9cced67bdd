"""The empty check: complete at once, without reading the packet.

Not a verifier anyone should ship. `build.sh --floor` builds it so the
sandbox benchmark can show what componentize-py's output costs per
fresh-instance check before any verifier logic runs.
"""

from wit_world import exports
from wit_world.imports.types import Packet, Verdict


class Completion(exports.Completion):
    def check(self, packet: Packet) -> Verdict:
        return Verdict(complete=True, reason="empty check", feedback=None)


class WarmUp(exports.WarmUp):
    def warm(self) -> None:
        pass
