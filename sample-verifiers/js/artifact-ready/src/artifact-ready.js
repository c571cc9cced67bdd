/**
 * `artifact-ready` in JavaScript: the spec's example completion checker.
 *
 * Complete only when a `read_artifact` call succeeded and artifact `A42` is
 * JSON with `"ready": true`; otherwise not complete, with the feedback
 * `FEEDBACK` and a reason naming what is missing. Same verdicts as the Rust
 * sample in `sample-verifiers/artifact-ready`.
 *
 * This module is the whole logic and imports nothing from the host: it takes
 * the artifact reader as an argument, so `node --test` runs it natively with
 * an in-memory reader, and `component.js` hands it the host's `read` import.
 */

/** The artifact that must be ready. */
export const ARTIFACT_ID = 'A42';
/** The tool whose successful call proves the model read the artifact. */
export const READ_TOOL = 'read_artifact';
/** Feedback returned whenever the execution is not complete. */
export const FEEDBACK = 'Read and verify artifact A42 before finishing.';

/**
 * Decides whether the execution is complete.
 *
 * `read(id)` is `verdict:verifier/artifacts.read`: it returns the artifact
 * (`bytes` a Uint8Array) or throws an error whose `payload` is the WIT
 * `artifact-error` (`{ tag: 'not-found' }`, `{ tag: 'too-large', val: 12n }`...).
 */
export function check(packet, read) {
  if (!succeeded(packet, READ_TOOL)) {
    return notComplete('no successful read_artifact call');
  }
  let artifact;
  try {
    artifact = read(ARTIFACT_ID);
  } catch (error) {
    const code = error?.payload?.tag;
    if (code === undefined) throw error; // not a refusal: a bug, let it trap
    if (code === 'not-found') return notComplete('artifact A42 does not exist');
    return notComplete(`artifact A42 unreadable: ${code}`);
  }
  const document = parseJson(artifact.bytes);
  if (document === undefined) return notComplete('artifact A42 is not JSON');
  if (isObject(document) && document.ready === true) {
    return { complete: true, reason: 'artifact A42 is ready' };
  }
  return notComplete('artifact A42 is not ready');
}

/** True when any call of `tool` has an authentic `succeeded` outcome. */
export function succeeded(packet, tool) {
  return packet.observations.some(
    (observation) => observation.toolName === tool && observation.outcome?.status === 'succeeded',
  );
}

/**
 * The document as JSON, or undefined unless the bytes are strict UTF-8 JSON
 * (a byte order mark is kept, so JSON.parse refuses it, like the Rust SDK).
 */
export function parseJson(bytes) {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function notComplete(reason) {
  return { complete: false, reason, feedback: FEEDBACK };
}
