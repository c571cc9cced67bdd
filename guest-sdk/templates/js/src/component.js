// The component's entry point: exports `verdict:verifier/completion` and
// `warm-up` (world `warm-completion-checker` in wit/verifier.wit). Keep this
// file as generated: the logic is in verifier.js.
import { read } from 'verdict:verifier/artifacts@0.1.1';

import { checked } from './checked.js';
import { check } from './verifier.js';

export const completion = {
  check: (packet) => checked(check(packet, read)),
};

// Called by the host once on each fresh instance, before its one check: the
// JavaScript engine's start-up in the first call into an instance runs
// here, ahead of the check when the host keeps instances ready. It sees no
// packet; keep nothing from it.
export const warmUp = {
  warm: () => {},
};
