/**
 * `{{name}}`: a verdict completion checker.
 *
 * Complete only when the model wrote an artifact during this execution (a
 * `write_artifact` call succeeded: a `status.json` left by an earlier run
 * does not count) and artifact `status.json` is JSON with `"done": true`;
 * otherwise not complete, with feedback telling the model what to do.
 * Replace the logic with your own; `npm test` runs it natively, and on the
 * shipped `examples/` (see README.md).
 *
 * `check` takes the artifact reader as an argument: `component.js` hands it
 * the host's `read` import, the tests an in-memory one.
 */

/** The artifact that must say the work is done. */
export const STATUS_ID = 'status.json';
/** The tool whose successful call shows the model wrote it. */
export const WRITE_TOOL = 'write_artifact';
/** Feedback returned whenever the execution is not complete. */
export const FEEDBACK = 'Write status.json with "done": true (write_artifact) once the task is finished.';

/**
 * Decides whether the execution is complete.
 *
 * `read(id)` returns the artifact (`bytes` a Uint8Array) or throws an error
 * whose `payload` is the WIT `artifact-error` (`{ tag: 'not-found' }`, ...).
 * Return `{ complete, reason, feedback }` with `complete` exactly `true` or
 * `false` (not merely truthy) and `reason`, `feedback` strings or absent:
 * `component.js` refuses anything else (see `checked.js`).
 */
export function check(packet, read) {
  if (!succeeded(packet, WRITE_TOOL)) return notComplete('no successful write_artifact call');
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

/** True when any call of `tool` has an authentic `succeeded` outcome. */
export function succeeded(packet, tool) {
  return packet.observations.some(
    (observation) => observation.toolName === tool && observation.outcome?.status === 'succeeded',
  );
}

function notComplete(reason) {
  return { complete: false, reason, feedback: FEEDBACK };
}
