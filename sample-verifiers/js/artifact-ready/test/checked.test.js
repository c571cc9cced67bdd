// `checked`, the entry point's guard: a verdict the host would misread is
// refused (in the component: a trap), a well-formed one passes unchanged.
import assert from 'node:assert/strict';
import { it } from 'node:test';

import { checked } from '../src/checked.js';

it('passes a well-formed verdict unchanged', () => {
  for (const verdict of [
    { complete: true },
    { complete: false, reason: 'r', feedback: 'f' },
    { complete: false, reason: null, feedback: undefined },
  ]) {
    assert.equal(checked(verdict), verdict);
  }
});

for (const [verdict, message] of [
  [{ complete: 'yes' }, /complete must be true or false/],
  [{ complete: 'no' }, /complete must be true or false/],
  [{ complete: 1 }, /complete must be true or false/],
  [{}, /complete must be true or false/],
  [{ complete: true, reason: 42 }, /reason must be a string or absent/],
  [{ complete: false, feedback: { text: 'x' } }, /feedback must be a string or absent/],
  [undefined, /must return a verdict object/],
  [true, /must return a verdict object/],
]) {
  it(`refuses ${JSON.stringify(verdict)}`, () => {
    assert.throws(() => checked(verdict), { name: 'TypeError', message });
  });
}
