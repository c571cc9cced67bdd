// Native tests of `check` (node --test) against an in-memory artifact reader.
import assert from 'node:assert/strict';
import { it } from 'node:test';

import { FEEDBACK, STATUS_ID, check } from '../src/verifier.js';

const PACKET = {
  executionId: 'exec-1',
  iteration: 1,
  outputText: '',
  outputTruncated: false,
  observations: [],
  observedToolCalls: 0,
  observationsTruncated: false,
};

/** `read` over `items`, refusing like the host. */
function reader(items) {
  return (id) => {
    if (!Object.hasOwn(items, id)) throw Object.assign(new Error(), { payload: { tag: 'not-found' } });
    const bytes = new TextEncoder().encode(items[id]);
    return { id, revision: 'r1', size: BigInt(bytes.length), bytes };
  };
}

it('is complete when status.json says done', () => {
  const verdict = check(PACKET, reader({ [STATUS_ID]: '{"done": true}' }));
  assert.equal(verdict.complete, true);
  assert.equal(verdict.feedback, undefined);
});

for (const [items, reason] of [
  [{}, 'status.json does not exist'],
  [{ [STATUS_ID]: '{"done": false}' }, 'status.json does not say done'],
  [{ [STATUS_ID]: '{"done": 1}' }, 'status.json does not say done'],
  [{ [STATUS_ID]: 'done' }, 'status.json is not JSON'],
]) {
  it(`is not complete: ${reason}`, () => {
    assert.deepEqual(check(PACKET, reader(items)), { complete: false, reason, feedback: FEEDBACK });
  });
}

it('is not complete when the read is refused', () => {
  const refuse = () => {
    throw Object.assign(new Error(), { payload: { tag: 'limit-reached' } });
  };
  assert.equal(check(PACKET, refuse).reason, 'status.json unreadable: limit-reached');
});
