// The component's entry point: exports `verdict:verifier/completion`
// (world `completion-checker` in wit/verdict-verifier@0.1.0/verifier.wit), backed by the host's
// artifacts import.
import { read } from 'verdict:verifier/artifacts@0.1.0';

import { check } from './artifact-ready.js';

export const completion = {
  check: (packet) => check(packet, read),
};
