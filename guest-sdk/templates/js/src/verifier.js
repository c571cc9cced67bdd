/**
 * `{{name}}`: a verdict completion checker.
 *
 * Complete only when artifact `status.json` is JSON with `"done": true`;
 * otherwise not complete, with feedback telling the model what to do.
 * Replace the logic with your own; `npm test` runs it natively.
 *
 * `check` takes the artifact reader as an argument: `component.js` hands it
 * the host's `read` import, the tests an in-memory one.
 */

/** The artifact that must say the work is done. */
export const STATUS_ID = 'status.json';
/** Feedback returned whenever the execution is not complete. */
export const FEEDBACK = 'Write status.json with "done": true once the task is finished.';

/**
 * Decides whether the execution is complete.
 *
 * `read(id)` returns the artifact (`bytes` a Uint8Array) or throws an error
 * whose `payload` is the WIT `artifact-error` (`{ tag: 'not-found' }`, ...).
 */
export function check(packet, read) {
  let artifact;
  try {
    artifact = read(STATUS_ID);
  } catch (error) {
    const code = error?.payload?.tag;
    if (code === undefined) throw error; // not a refusal: a bug, let it trap
    if (code === 'not-found') return notComplete('status.json does not exist');
    return notComplete(`status.json unreadable: ${code}`);
  }
  let status;
  try {
    status = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(artifact.bytes));
  } catch {
    return notComplete('status.json is not JSON');
  }
  if (status?.done === true) {
    return { complete: true, reason: 'status.json says done' };
  }
  return notComplete('status.json does not say done');
}

function notComplete(reason) {
  return { complete: false, reason, feedback: FEEDBACK };
}
