// The component's entry point: exports `verdict:verifier/completion`
// (world `completion-checker` in wit/verifier.wit).
import { read } from 'verdict:verifier/artifacts@0.1.0';

import { check } from './verifier.js';

export const completion = {
  check: (packet) => check(packet, read),
};
