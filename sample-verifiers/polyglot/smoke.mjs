// Runs built `artifact-ready` components under Node, with no verdict host:
// `jco transpile` turns each component into an ES module whose WASI imports
// are jco's preview2-shim and whose `verdict:verifier/artifacts` import is the
// in-memory store below. Checks the repository's example packets.
//
//   node --experimental-wasm-extended-const smoke.mjs \
//     --tools TOOLS_DIR --examples EXAMPLES_DIR COMPONENT.wasm...
//
// This proves the wasm builds decide like the native tests; it says nothing
// about the verdict sandbox (limits, deny-all WASI), which the host tests own.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const FEEDBACK = 'Read and verify artifact A42 before finishing.';

function parseArgs(argv) {
  const args = { components: [] };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--tools') args.tools = argv[(i += 1)];
    else if (argv[i] === '--examples') args.examples = argv[(i += 1)];
    else args.components.push(resolve(argv[i]));
  }
  if (!args.tools || !args.examples || args.components.length === 0) {
    console.error('usage: smoke.mjs --tools DIR --examples DIR COMPONENT.wasm...');
    process.exit(2);
  }
  return args;
}

// The artifacts import, shared by every transpiled component through a
// global (each component imports this module by its own relative path).
const ARTIFACTS_MODULE = `
const store = (globalThis.verdictSmokeArtifacts ??= new Map());
export function read(id) {
  const bytes = store.get(id);
  if (bytes === undefined) throw { tag: 'not-found' };
  return { id, revision: 'r1', size: BigInt(bytes.length), bytes };
}
export function list(prefix) {
  return [...store.keys()].filter((id) => id.startsWith(prefix)).sort();
}
`;

/** A packet as the WIT record: the example JSON plus the defaulted fields. */
function loadPacket(path) {
  const json = JSON.parse(readFileSync(path, 'utf8'));
  return {
    outputTruncated: false,
    observationsTruncated: false,
    ...json,
    observations: json.observations.map((o) => ({ ...o })),
  };
}

async function transpile(component, workDir, jco) {
  const name = basename(component, '.wasm');
  const outDir = join(workDir, name);
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(jco, [
    'transpile', component, '-o', outDir, '--quiet',
    '--name', name,
    '--map', 'verdict:verifier/artifacts@0.1.1=../artifacts.js',
  ]);
  const module = await import(pathToFileURL(join(outDir, `${name}.js`)).href);
  return module;
}

const args = parseArgs(process.argv.slice(2));
// Under the tools' node_modules, so the transpiled code finds preview2-shim.
const workDir = join(args.tools, 'js', 'smoke');
mkdirSync(workDir, { recursive: true });
writeFileSync(join(workDir, 'artifacts.js'), ARTIFACTS_MODULE);
writeFileSync(join(workDir, 'package.json'), '{"type":"module"}\n');
const jco = join(args.tools, 'js', 'node_modules', '.bin', 'jco');

const store = (globalThis.verdictSmokeArtifacts ??= new Map());
const a42 = readFileSync(join(args.examples, 'artifacts', 'A42'));
const ready = loadPacket(join(args.examples, 'packets', 'ready.json'));
const premature = loadPacket(join(args.examples, 'packets', 'premature.json'));

const cases = [
  {
    name: 'ready packet, A42 ready',
    packet: ready,
    artifacts: { A42: a42 },
    want: { complete: true, reason: 'artifact A42 is ready', feedback: undefined },
  },
  {
    name: 'premature packet',
    packet: premature,
    artifacts: { A42: a42 },
    want: { complete: false, reason: 'no successful read_artifact call', feedback: FEEDBACK },
  },
  {
    name: 'ready packet, no A42',
    packet: ready,
    artifacts: {},
    want: { complete: false, reason: 'artifact A42 does not exist', feedback: FEEDBACK },
  },
  {
    name: 'ready packet, A42 not ready',
    packet: ready,
    artifacts: { A42: new TextEncoder().encode('{"ready":false}') },
    want: { complete: false, reason: 'artifact A42 is not ready', feedback: FEEDBACK },
  },
  {
    name: 'ready packet, A42 not JSON',
    packet: ready,
    artifacts: { A42: new TextEncoder().encode('{ready') },
    want: { complete: false, reason: 'artifact A42 is not JSON', feedback: FEEDBACK },
  },
];

let passed = 0;
let failed = 0;
for (const component of args.components) {
  const { completion, warmUp } = await transpile(component, workDir, jco);
  // As the host does: the optional warm-up first (WIT 0.1.1), answering nothing.
  if (warmUp) {
    const answer = warmUp.warm();
    const ok = answer === undefined;
    ok ? (passed += 1) : (failed += 1);
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${basename(component)}: warm-up`);
  }
  for (const { name, packet, artifacts, want } of cases) {
    store.clear();
    for (const [id, bytes] of Object.entries(artifacts)) store.set(id, new Uint8Array(bytes));
    let got;
    try {
      const verdict = completion.check(packet);
      got = { complete: verdict.complete, reason: verdict.reason, feedback: verdict.feedback };
    } catch (error) {
      got = { trap: String(error) };
    }
    const ok = JSON.stringify(got) === JSON.stringify(want);
    ok ? (passed += 1) : (failed += 1);
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${basename(component)}: ${name}`);
    if (!ok) console.log(`     want ${JSON.stringify(want)}\n     got  ${JSON.stringify(got)}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
