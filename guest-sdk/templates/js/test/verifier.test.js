// Native tests of `check` (node --test) against an in-memory artifact reader.
import assert from 'node:assert/strict';
import { it } from 'node:test';

import { FEEDBACK, STATUS_ID, WRITE_TOOL, check } from '../src/verifier.js';

/** A packet with one `write_artifact` call per outcome given. */
function wrote(...outcomes) {
  const observations = outcomes.map((outcome, i) => ({
    toolName: WRITE_TOOL,
    callId: `call-${i + 1}`,
    effect: 'write',
    outcome,
  }));
  return {
    executionId: 'exec-1',
    iteration: 1,
    outputText: '',
    outputTruncated: false,
    observations,
    observedToolCalls: observations.length,
    observationsTruncated: false,
  };
}

const PACKET = wrote({ status: 'succeeded', executed: true });

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

for (const [name, packet] of [
  ['no calls', wrote()],
  ['a denied call', wrote({ status: 'failed', failure: 'permission', executed: false })],
  ['a call without outcome', wrote(undefined)],
]) {
  it(`is not complete after ${name}`, () => {
    assert.deepEqual(check(packet, reader({ [STATUS_ID]: '{"done": true}' })), {
      complete: false,
      reason: 'no successful write_artifact call',
      feedback: FEEDBACK,
    });
  });
}

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
