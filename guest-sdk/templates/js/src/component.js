// The component's entry point: exports `verdict:verifier/completion`
// (world `completion-checker` in wit/verifier.wit). Keep this file as
// generated: the logic is in verifier.js.
import { read } from 'verdict:verifier/artifacts@0.1.0';

import { checked } from './checked.js';
import { check } from './verifier.js';

export const completion = {
  check: (packet) => checked(check(packet, read)),
};
