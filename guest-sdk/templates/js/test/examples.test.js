// The shipped examples, checked natively: the same files `verdict check
// --packet examples/... --artifacts examples/artifacts` reads (README.md), so
// the examples and the logic cannot drift apart. `packet` reads any packet
// file of `verdict check` into what componentize-js hands `check`: reuse it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { it } from 'node:test';

import { checked } from '../src/checked.js';
import { FEEDBACK, check } from '../src/verifier.js';

const EXAMPLES = new URL('../examples/', import.meta.url);

/**
 * A packet file (camelCase JSON) as the component receives it: absent
 * options `undefined`, enum cases kebab-case (`not_started` → `not-started`),
 * u64 as BigInt, the task state's `payload` as JSON text `payloadJson`.
 */
export function packet(name) {
  const doc = JSON.parse(readFileSync(new URL(name, EXAMPLES), 'utf8'));
  const kebab = (text) => text.replaceAll('_', '-');
  const state = doc.taskState;
  return {
    executionId: doc.executionId,
    iteration: doc.iteration,
    outputText: doc.outputText,
    outputTruncated: doc.outputTruncated ?? false,
    observations: (doc.observations ?? []).map((o) => ({
      toolName: o.toolName,
      callId: o.callId,
      effect: o.effect,
      outcome: o.outcome && {
        status: kebab(o.outcome.status),
        failure: o.outcome.failure,
        executed: o.outcome.executed ?? false,
        resultFingerprint: o.outcome.resultFingerprint,
      },
    })),
    observedToolCalls: doc.observedToolCalls ?? 0,
    observationsTruncated: doc.observationsTruncated ?? false,
    taskState: state && {
      hostScope: state.hostScope,
      revision: BigInt(state.revision),
      generation: BigInt(state.generation ?? 0),
      payloadJson: JSON.stringify(state.payload),
    },
  };
}

/** The host's `read` over `examples/artifacts`, like `verdict check`. */
export function readExample(id) {
  const path = new URL(`artifacts/${id}`, EXAMPLES);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw Object.assign(new Error(id), { payload: { tag: 'not-found' } });
  }
  const bytes = new Uint8Array(readFileSync(path));
  return { id, revision: 'r1', size: BigInt(bytes.length), bytes };
}

/** What the component answers: `check` through the entry point's guard. */
const answer = (name) => checked(check(packet(name), readExample));

it('is complete on complete.json', () => {
  assert.deepEqual(answer('complete.json'), { complete: true, reason: 'status.json says done' });
});

it('is not complete on not-complete.json', () => {
  assert.deepEqual(answer('not-complete.json'), {
    complete: false,
    reason: 'no successful write_artifact call',
    feedback: FEEDBACK,
  });
});
