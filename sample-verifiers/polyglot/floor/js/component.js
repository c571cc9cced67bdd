// The empty check: complete at once, without reading the packet.
//
// Not a verifier anyone should ship. `build.sh --floor` builds it so the
// sandbox benchmark can show what componentize-js's output costs per
// fresh-instance check before any verifier logic runs.
export const completion = {
  check: (_packet) => ({ complete: true, reason: 'empty check' }),
};

// As the sample's: the engine's first-call start-up, before the check.
export const warmUp = {
  warm: () => {},
};
