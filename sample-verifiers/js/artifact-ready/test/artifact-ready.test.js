// Native tests of `check` (node --test, no wasm host): the same cases as the
// Rust sample, against an in-memory reader that refuses like the host.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ARTIFACT_ID, FEEDBACK, READ_TOOL, check } from '../src/artifact-ready.js';

const SUCCEEDED = { status: 'succeeded', executed: true };
const FAILED = { status: 'failed', failure: 'execution', executed: true };

function packet(...observations) {
  return {
    executionId: 'exec',
    iteration: 1,
    outputText: '',
    outputTruncated: false,
    observations,
    observedToolCalls: observations.length,
    observationsTruncated: false,
  };
}

function readCall(outcome) {
  return packet({ toolName: READ_TOOL, callId: 'call-1', effect: 'read', outcome });
}

/** An artifact refusal as the component bindings throw it. */
function refusal(tag, val) {
  return Object.assign(new Error(tag), { payload: val === undefined ? { tag } : { tag, val } });
}

/** In-memory artifacts with the host's refusals for a size or read limit. */
function store(items = {}, { maxBytes, maxReads } = {}) {
  const reader = (id) => {
    if (maxReads !== undefined && reader.reads >= maxReads) throw refusal('limit-reached');
    reader.reads += 1;
    if (!Object.hasOwn(items, id)) throw refusal('not-found');
    const bytes = typeof items[id] === 'string' ? new TextEncoder().encode(items[id]) : items[id];
    if (maxBytes !== undefined && bytes.length > maxBytes) {
      throw refusal('too-large', BigInt(bytes.length));
    }
    return { id, revision: 'r1', size: BigInt(bytes.length), bytes };
  };
  reader.reads = 0;
  return reader;
}

const readyStore = (json, limits) => store({ [ARTIFACT_ID]: json }, limits);

describe('artifact-ready', () => {
  it('is complete when the read succeeded and the artifact is ready', () => {
    const verdict = check(readCall(SUCCEEDED), readyStore('{"ready":true}'));
    assert.equal(verdict.complete, true);
    assert.equal(verdict.reason, 'artifact A42 is ready');
    assert.equal(verdict.feedback, undefined);
  });

  for (const [name, candidate] of [
    ['no calls', packet()],
    ['a failed call', readCall(FAILED)],
    ['a call without outcome', readCall(undefined)],
  ]) {
    it(`is not complete after ${name}`, () => {
      const read = readyStore('{"ready":true}');
      const verdict = check(candidate, read);
      assert.deepEqual(verdict, {
        complete: false,
        reason: 'no successful read_artifact call',
        feedback: FEEDBACK,
      });
      assert.equal(read.reads, 0);
    });
  }

  for (const json of ['{"ready":false}', '{"ready":"true"}', '{"ready":1}', '{}', '[true]', 'true']) {
    it(`is not ready for ${json}`, () => {
      const verdict = check(readCall(SUCCEEDED), readyStore(json));
      assert.deepEqual(verdict, { complete: false, reason: 'artifact A42 is not ready', feedback: FEEDBACK });
    });
  }

  for (const [name, read, reason] of [
    ['missing', store(), 'artifact A42 does not exist'],
    ['invalid', readyStore('{ready'), 'artifact A42 is not JSON'],
    ['NaN', readyStore('{"ready":NaN}'), 'artifact A42 is not JSON'],
    ['with a byte order mark', readyStore('\ufeff{"ready":true}'), 'artifact A42 is not JSON'],
    ['not UTF-8', readyStore(Uint8Array.of(0x22, 0xff, 0x22)), 'artifact A42 is not JSON'],
    ['too large', readyStore('{"ready":true}', { maxBytes: 4 }), 'artifact A42 unreadable: too-large'],
    ['over the read limit', readyStore('{"ready":true}', { maxReads: 0 }), 'artifact A42 unreadable: limit-reached'],
  ]) {
    it(`is not complete when the artifact is ${name}`, () => {
      assert.deepEqual(check(readCall(SUCCEEDED), read), { complete: false, reason, feedback: FEEDBACK });
    });
  }

  it('lets an error that is not a refusal propagate (the instance traps)', () => {
    const broken = () => {
      throw new TypeError('bug');
    };
    assert.throws(() => check(readCall(SUCCEEDED), broken), TypeError);
  });
});
