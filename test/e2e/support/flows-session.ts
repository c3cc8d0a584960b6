/**
 * The VS Code session that mcp.e2e.test.ts and user-flows.e2e.test.ts share (profile "flows"): Cadre
 * and the test-only lm-probe extension on a small git project, the API on a fixed port with
 * CADRE_API_KEY (the extension's server adopts it as an admin key, so a test can call REST and MCP
 * as a user of the API would), a loopback OpenAI-compatible model and the loopback GitHub stand-in.
 *
 * The project: src/math.js (add) with its node --test test, util.js with a leftover `debugger`
 * (coder-ai's fix) and config.js with a planted AWS key id on line 3 (the scans of the MCP client
 * and the language-model tool).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { KEY } from '../../support/fleet-server';
import { GithubStandin, rsaKeyPair } from '../../unit/github/github-standin';
import { answer, byAgent, FakeProvider } from '../../unit/llm/fake-provider';
import { commitAll, freePort, launch, plantedKey, ROOT, session, withEnv, type Vsc } from './session';

export const PROBE = path.join(__dirname, '..', 'lm-probe');

export const GOAL = 'Add a subtract(a, b) function to src/math.js, exported next to add, with a test.';
/** What the model stand-in answers req-ai, planner-ai and coder-ai in the BUILD run (as test/integration/http/build-with-model.test.ts). */
const MODEL_ANSWERS = {
  'req-ai': { stories: [{ role: 'developer', capability: 'subtract two numbers with subtract(a, b)', benefit: 'callers do not write a + -b', source: GOAL, acceptanceCriteria: [{ given: 'the math module', when: 'subtract(5, 3) is called', then: 'it returns 2' }] }] },
  'planner-ai': { tasks: [{ id: 'T1', title: 'Write subtract in src/math.js', dependsOn: [] }, { id: 'T2', title: 'Test subtract', dependsOn: ['T1'] }] },
  'coder-ai': {
    files: [
      { path: 'src/math.js', content: "'use strict';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nfunction subtract(a, b) {\n  return a - b;\n}\n\nmodule.exports = { add, subtract };\n" },
      { path: 'test/subtract.test.js', content: "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { subtract } = require('../src/math');\n\ntest('subtract', () => {\n  assert.equal(subtract(5, 3), 2);\n});\n" },
    ],
    explanation: 'subtract next to add, with its own test file.',
  },
};

export interface FlowsSession {
  vsc: Vsc;
  /** The workspace folder (real path). */
  ws: string;
  /** The extension's API, e.g. http://127.0.0.1:41234 (port fixed before launch). */
  url: string;
  /** The API key the server adopted (CADRE_API_KEY). */
  key: string;
  model: FakeProvider;
  gh: GithubStandin;
  ghKeys: ReturnType<typeof rsaKeyPair>;
  /** Where lm-probe writes the tool's answer. */
  probeOut: string;
}

function project(): string {
  const ws = realpathSync(mkdtempSync(path.join(tmpdir(), 'cadre-e2e-flows-')));
  mkdirSync(path.join(ws, 'src'));
  mkdirSync(path.join(ws, 'test'));
  writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ name: 'sample-math', version: '1.0.0', private: true, scripts: { test: 'node --test' } }, null, 2) + '\n');
  writeFileSync(path.join(ws, 'src/math.js'), "'use strict';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n");
  writeFileSync(path.join(ws, 'test/math.test.js'), "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../src/math');\n\ntest('add', () => {\n  assert.equal(add(2, 3), 5);\n});\n");
  writeFileSync(path.join(ws, 'util.js'), "'use strict';\n\nfunction double(x) {\n  debugger;\n  return x * 2;\n}\n\nmodule.exports = { double };\n");
  writeFileSync(path.join(ws, 'config.js'), `module.exports = {\n  region: 'eu-west-1',\n  key: "${plantedKey()}",\n};\n`);
  commitAll(ws);
  return ws;
}

/** The shared "flows" session (started by the first file that asks for it). */
export function flowsSession(): Promise<FlowsSession> {
  let restoreEnv = () => {};
  let stopStandins = async () => {};
  return session<FlowsSession>('flows', async () => {
    const model = new FakeProvider();
    const ghKeys = rsaKeyPair();
    const gh = new GithubStandin({ appId: 31337, installationId: 4711, publicKey: ghKeys.publicKey });
    const probeOut = path.join(mkdtempSync(path.join(tmpdir(), 'cadre-e2e-probe-')), 'result.json');
    stopStandins = async () => {
      await model.stop().catch(() => {});
      await gh.close().catch(() => {});
      rmSync(path.dirname(probeOut), { recursive: true, force: true });
    };
    const ws = project();
    await model.start();
    model.fallback = byAgent(Object.fromEntries(Object.entries(MODEL_ANSWERS).map(([agent, value]) => [agent, answer(JSON.stringify(value))])));
    await gh.start();
    const port = await freePort();
    // The harness hands this process's environment to the editor, and the extension to its server.
    restoreEnv = withEnv({
      CADRE_API_KEY: KEY,
      CADRE_SECRET_KEY_FILE: path.join(mkdtempSync(path.join(tmpdir(), 'cadre-e2e-secret-')), 'secret.key'),
      CADRE_GITHUB_WRITE_SPACING: 'off',
      CADRE_PROBE_OUT: probeOut,
    });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cadre-e2e-flows-data-'));
    const vsc = await launch({
      extensionPath: [ROOT, PROBE], workspacePath: ws, viewport: { width: 1500, height: 1400 },
      settings: {
        'cadre.server.port': port, 'cadre.server.dataDir': dataDir,
        'cadre.llm.provider': 'openai-compatible', 'cadre.llm.baseUrl': model.baseUrl, 'cadre.llm.model': 'test-model',
      },
    });
    return { vsc, ws, url: `http://127.0.0.1:${port}`, key: KEY, model, gh, ghKeys, probeOut };
  }, async () => {
    restoreEnv();
    await stopStandins();
  });
}
