/**
 * The guest edge's check of a verdict: `component.js` passes every verdict
 * through `checked` before the host sees it. Keep this file as generated.
 *
 * componentize-js hands the host the truth value of `complete`:
 * `{ complete: 'yes' }` or `{ complete: 'no' }` would be complete. A verdict
 * that is not exactly `{ complete: true | false, reason?: string,
 * feedback?: string }` throws a TypeError instead: the host reports a trap.
 */
export function checked(verdict) {
  if (typeof verdict !== 'object' || verdict === null) {
    throw new TypeError(`check must return a verdict object, not ${describe(verdict)}`);
  }
  if (typeof verdict.complete !== 'boolean') {
    throw new TypeError(`verdict.complete must be true or false, not ${describe(verdict.complete)}`);
  }
  for (const field of ['reason', 'feedback']) {
    const value = verdict[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw new TypeError(`verdict.${field} must be a string or absent, not ${describe(value)}`);
    }
  }
  return verdict;
}

function describe(value) {
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value} ${String(value)}`;
}
