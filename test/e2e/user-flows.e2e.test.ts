/**
 * What a user sees of Cadre's runs in a real VS Code (code-server 1.100.3 + headless Chromium, see
 * README.md), in one session on a small git project, every agent in its default mode (LEARNING):
 *
 * - a run's inline decorations on the lines it works on (gutter icon, line highlight and the
 *   `agent · phase` text after the line) while it runs, gone when it ends;
 * - Deny from the Approvals view: the execution ends without the change, the approval is denied and
 *   says who decided;
 * - a readiness Fix button that runs its agent, after which the check changes state;
 * - the GitHub PR approval (issue 15): coder-ai's pull request against the loopback GitHub stand-in is an
 *   approval in the Approvals view, and approving it there opens the PR;
 * - the flagship run: the BUILD workflow with a language model (a loopback OpenAI-compatible stand-in)
 *   completes (never `failed`), its LEARNING approvals granted from the Approvals view;
 * - a language-model tool invoked through `vscode.lm.invokeTool` by another extension (as an agent in
 *   chat would), answering with the finding and its location.
 *
 * The editor's process gets CADRE_API_KEY (the extension's server adopts it as an admin key) and a fixed
 * port, so the test can register the GitHub integration over REST as a user of the API would.
 * Skipped, with a line saying so, when the environment is not installed (test/e2e/setup.sh).
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { flowsSession, GOAL, type FlowsSession } from './support/flows-session';
import { ARTIFACTS, commitAll, failureArtifacts, git, NOTIFICATIONS, requireE2e, type Locator, type Vsc } from './support/session';

type Json = Record<string, unknown>;

/** A second repository for the PR flow: a planted key coder-ai's refactor moves to the environment. */
function prRepository(): string {
  const repo = realpathSync(mkdtempSync(path.join(tmpdir(), 'cadre-e2e-pr-')));
  mkdirSync(path.join(repo, 'src'));
  writeFileSync(path.join(repo, 'src/config.ts'), `export const awsKey = "${'AKIA' + 'Z7QRSTUVWXY2345A'}";\n`);
  commitAll(repo, 'init');
  return repo;
}

describe('what a user sees of runs, approvals, readiness and tools (e2e)', function () {
  this.timeout(300_000);
  let vsc: Vsc | null = null;
  let s: FlowsSession;
  let ws = '';
  let url = '';
  const shot = (name: string) => vsc!.screenshot(path.join(ARTIFACTS, `${name}.png`));
  const sidebar = () => vsc!.text('sidebar');
  const rest = async (method: string, route: string, body?: unknown): Promise<{ status: number; json: Json; text: string }> => {
    const res = await fetch(url + route, { method, headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : {}) as Json, text };
  };
  /** The Approvals view's row matching `text` (the view is in the Cadre side bar). */
  const approvalRow = (text: RegExp) => vsc!.page.locator('.part.sidebar .monaco-list-row', { hasText: text }).first();
  const clickRowAction = async (row: Locator, label: string) => {
    await row.hover();
    await row.locator(`.action-label[aria-label="${label}"]`).click({ timeout: 5_000 });
  };
  /**
   * What the active editor shows of decorations: the texts rendered after lines (CSS `::after` content of
   * decoration spans), the glyph-margin icons and the highlighted lines (decoration overlays).
   */
  const decorations = () => vsc!.page.evaluate(() => {
    const editors = Array.from(document.querySelectorAll('.part.editor .monaco-editor'));
    const editor = editors.find((e) => e.closest('.editor-group-container.active')) ?? editors[0] ?? document.body;
    const after: string[] = [];
    for (const el of Array.from(editor.querySelectorAll('.view-lines span'))) {
      for (const pseudo of ['::after', '::before']) {
        const c = getComputedStyle(el, pseudo).content;
        if (c && c !== 'none' && c !== 'normal' && c !== '""') after.push(c);
      }
    }
    const gutter = Array.from(editor.querySelectorAll('.glyph-margin-widgets > div, .margin-view-overlays div'))
      .filter((el) => /\bcgmr\b/.test(el.className) || /url\(/.test(getComputedStyle(el).backgroundImage)).length;
    const highlighted = Array.from(editor.querySelectorAll('.view-overlays > div > div')).filter((el) => /\bced-/.test(el.className)).length;
    const margin = Array.from(editor.querySelectorAll('.glyph-margin-widgets *, .margin-view-overlays *')).map((el) => el.className).filter(Boolean).slice(0, 30);
    return { after, gutter, highlighted, margin };
  });

  before(async function () {
    requireE2e(this);
    // Shared with mcp.e2e.test.ts (support/flows-session.ts): started by whichever file runs first.
    s = await flowsSession();
    ({ vsc, ws, url } = s);
  });
  failureArtifacts(() => vsc, 'flows-');

  it('activates with the API on the fixed port', async () => {
    await vsc!.waitUntil(async () => (await vsc!.statusBarItems()).some((t) => t.text.includes(url)), { timeoutMs: 120_000, what: `the Cadre status item to show ${url}` });
    await vsc!.openView('Cadre');
  });

  it("a run's lines carry the inline decorations while it runs; Deny from the Approvals view ends it without the change, denied and by whom", async () => {
    await vsc!.openFile('util.js');
    const before = await decorations();
    await vsc!.runCommand('Cadre: Fix with coder-ai');
    await vsc!.openView('Cadre');
    // coder-ai is LEARNING: its change waits for a person, and meanwhile the run's decorations stay on util.js.
    const row = approvalRow(/coder-ai.* risk/);
    await row.waitFor({ state: 'visible', timeout: 90_000 });
    let last = before;
    const during = await vsc!.waitUntil(async () => {
      const d = (last = await decorations());
      return d.gutter > before.gutter && d.highlighted > before.highlighted && d.after.some((t) => /coder-ai/.test(t)) ? d : null;
    }, { timeoutMs: 20_000, what: 'the gutter icon, the line highlight and the "coder-ai · …" text on util.js' }).catch((err: Error) => {
      throw new Error(`${err.message}: before ${JSON.stringify(before)}, now ${JSON.stringify(last)}`);
    });
    assert.ok(during.after.some((t) => /coder-ai[^"]*waiting for approval/.test(t)), `the after-line text says the run waits: ${during.after.join(' | ')}`);
    await shot('decorations-during-run');

    // coder-ai asks for each of its writes (the edit, then the commit on its branch): the person denies each
    // from the view, with a reason; a denied write is skipped and the run goes on to the next, then ends.
    const notes: string[] = [];
    await vsc!.waitUntil(async () => {
      const pending = approvalRow(/coder-ai.* risk/);
      if ((await pending.count()) === 0) return notes.length > 0 && /coder-ai fix\s*(failed|cancelled|completed)/.test(await sidebar());
      const label = (await pending.innerText()).split('\n')[0]!;
      await clickRowAction(pending, 'Deny');
      await vsc!.waitForText(/Deny coder-ai/, { scope: 'quickInput', timeoutMs: 10_000 });
      // Filled, not typed: keys typed before the box has focus would be lost.
      const box = vsc!.page.locator('.quick-input-widget .quick-input-box input').first();
      await box.fill('not this change: keep the debugger for now');
      await vsc!.waitUntil(async () => (await box.inputValue()) === 'not this change: keep the debugger for now', { timeoutMs: 5_000, what: 'the reason in the input box' });
      await vsc!.press('Enter');
      notes.push(await vsc!.waitForText(new RegExp(`Cadre: denied coder-ai [^\\n]*\\(by [^)]+\\)`), { scope: NOTIFICATIONS, timeoutMs: 20_000 }));
      if (notes.length === 1) await shot('approval-denied');
      await vsc!.waitUntil(async () => !(await sidebar()).includes(label), { timeoutMs: 30_000, what: `the denied "${label}" to leave the Approvals view` });
      return false;
    }, { timeoutMs: 120_000, what: 'every coder-ai approval denied and the run ended' });
    // The decided approvals, as the API shows them: denied, by the editor's person, and the editor said so.
    const denied = ((await rest('GET', '/v1/approvals?status=denied')).json['approvals'] as Json[]).filter((a) => a['agentId'] === 'coder-ai');
    assert.ok(denied.length >= 1, 'at least one denied approval');
    for (const a of denied) {
      assert.equal(a['status'], 'denied');
      assert.match(String(a['decidedBy']), /^editor:/, `decided from the editor: ${JSON.stringify(a)}`);
      assert.equal(a['reason'], 'not this change: keep the debugger for now');
    }
    assert.ok(notes[0]!.includes(`(by ${String(denied[0]!['decidedBy'])})`), `the notification names who decided: ${notes[0]} / ${String(denied[0]!['decidedBy'])}`);
    // The run ended, its decorations left with it, and nothing was written.
    await vsc!.waitUntil(async () => {
      const d = await decorations();
      return d.gutter === before.gutter && d.highlighted === before.highlighted && !d.after.some((t) => /coder-ai/.test(t)) ? d : null;
    }, { timeoutMs: 30_000, what: "the run's decorations to be cleared" });
    await vsc!.waitForText(/coder-ai fix\s*(failed|cancelled|completed)/, { scope: 'sidebar', timeoutMs: 30_000 });
    assert.match(readFileSync(path.join(ws, 'util.js'), 'utf8'), /debugger/, 'the denied change was not written');
  });

  it('a readiness Fix button runs its agent, and the check changes state', async () => {
    await vsc!.openFile('src/math.js');
    await vsc!.runCommand('Cadre: Run Readiness Checks');
    const reviewRow = () => vsc!.page.locator('.part.sidebar .monaco-list-row', { hasText: 'Review passed' }).first();
    await reviewRow().waitFor({ state: 'visible', timeout: 60_000 });
    const first = await reviewRow().innerText();
    assert.match(first, /Review passed\s*(unknown|fail) ·/, first);
    await shot('readiness-before-fix');
    await clickRowAction(reviewRow(), 'Fix');
    // The Fix runs review-ai review on the open file; the person re-checks once it is done.
    await vsc!.waitForText(/review-ai review\s*completed/, { scope: 'sidebar', timeoutMs: 90_000 });
    await vsc!.runCommand('Cadre: Run Readiness Checks');
    const after = await vsc!.waitUntil(async () => {
      const t = await reviewRow().innerText().catch(() => '');
      return /Review passed\s*pass ·/.test(t) ? t : null;
    }, { timeoutMs: 60_000, what: 'the "Review passed" check to pass after its Fix' });
    assert.match(after, /review-ai act_\w+ \(completed\)/, 'the review the Fix started');
    await shot('readiness-after-fix');
  });

  it("the GitHub PR approval: coder-ai's pull request appears in the Approvals view by itself (no Refresh), and approving it there opens it on GitHub", async () => {
    const { gh, ghKeys } = s;
    const secret = 'cadre/integrations/local/github';
    const stored = await rest('PUT', `/api/v1/secrets/${encodeURIComponent(secret)}`, { AppID: 31337, InstallationID: 4711, PrivateKeyPEM: ghKeys.privateKeyPem, WebhookSecret: 'e'.repeat(64) });
    assert.equal(stored.status, 200, stored.text);
    const reg = await rest('POST', '/api/v1/integrations/github', { integration_name: 'service', github_repo: gh.full, github_installation_id: 4711, api_url: gh.url, config: { agents: ['coder-ai'], require_review: true } });
    assert.equal(reg.status, 201, reg.text);
    const repo = prRepository();
    const run = await rest('POST', '/api/agents/coder-ai/refactor', { prompt: 'read secrets from the environment', source: repo });
    assert.equal(run.status, 202, run.text);
    await vsc!.openView('Cadre');
    // LEARNING: coder-ai's own writes (on its branch) are approved from the view first, then its PR request appears.
    const prRow = approvalRow(/open a pull request/);
    let granted = 0;
    // The PR request is filed after coder-ai's execution ended: the server pushes it (cadre/approvalChanged)
    // and the view refreshes by itself. Nobody presses Refresh here.
    await vsc!.waitUntil(async () => {
      if ((await prRow.count()) > 0) return true;
      // coder-ai's own writes only: the PR request may appear between the two looks and must wait for its own check.
      const other = approvalRow(/coder-ai: (?!open a pull request).* risk/);
      if ((await other.count()) > 0) {
        await clickRowAction(other, 'Approve').catch(() => undefined);
        granted += 1;
      }
      return false;
    }, { timeoutMs: 120_000, what: "coder-ai's pull-request approval in the Approvals view, without a Refresh" }).catch(async (err: Error) => {
      const agent = (await rest('GET', '/v1/agents/coder-ai/status')).json;
      const status = (await rest('GET', String(run.json['statusUrl']))).text;
      const pulls = (await rest('GET', `/api/v1/integrations/github/${String(reg.json['integration_id'])}/pulls`)).text;
      const approvals = (await rest('GET', '/v1/approvals?status=all')).text;
      throw new Error(`${err.message}; coder-ai is ${JSON.stringify(agent['acmf'])}; pulls: ${pulls.slice(0, 2000)}; approvals: ${approvals.slice(0, 3000)}; the refactor: ${status.slice(0, 600)}`);
    });
    // It came by itself: the refactor had ended before the request was filed (no execution event announced it).
    const refactor = (await rest('GET', String(run.json['statusUrl']))).json;
    assert.ok(['completed', 'failed', 'cancelled'].includes(String(refactor['status'])), `the refactor had ended: ${String(refactor['status'])}`);
    assert.equal(gh.pulls.length, 0, 'nothing is opened before a person approves');
    assert.match(await prRow.innerText(), new RegExp(`coder-ai: open a pull request on ${gh.full}`));
    await shot('github-pr-approval');
    await clickRowAction(prRow, 'Approve');
    const pr = await vsc!.waitUntil(async () => gh.pulls[0] ?? null, { timeoutMs: 60_000, what: 'the PR on the GitHub stand-in' });
    assert.match(pr.head, /^cadre\/coder-ai\//);
    await vsc!.waitUntil(async () => (pr.labels.length > 0 ? true : null), { timeoutMs: 30_000, what: "the PR's labels" });
    assert.ok(pr.labels.includes('cadre:acmf-learning'), pr.labels.join(', '));
    console.log(`      (coder-ai's own writes took ${granted} approval(s) before its PR request; the view was never refreshed by hand)`);
  });

  it('the flagship BUILD workflow with a language model completes (not failed), its LEARNING approvals granted from the Approvals view', async () => {
    const head = git(ws, 'rev-parse', 'HEAD');
    await vsc!.runCommand('Cadre: Run Workflow…');
    await vsc!.page.locator('.quick-input-widget .quick-input-box input').waitFor({ state: 'visible', timeout: 10_000 });
    await vsc!.page.keyboard.type('BUILD');
    const row = vsc!.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'build' }).first();
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    await row.click();
    await vsc!.waitForText('The goal of this run', { scope: 'quickInput', timeoutMs: 10_000 });
    await vsc!.page.keyboard.type(GOAL);
    await vsc!.press('Enter');
    await vsc!.openView('Cadre');
    const granted: string[] = [];
    const status = await vsc!.waitUntil(async () => {
      const m = /\bbuild\s*(completed|failed|cancelled)/.exec(await sidebar());
      if (m) return m[1]!;
      const pending = approvalRow(/-ai: .* risk/);
      if ((await pending.count()) > 0) {
        const text = (await pending.innerText().catch(() => '')).split('\n')[0]!;
        await clickRowAction(pending, 'Approve').then(() => void granted.push(text), () => undefined);
      }
      return null;
    }, { timeoutMs: 240_000, what: 'the BUILD workflow to end in the Executions tree' });
    await shot('flagship-build');
    assert.equal(status, 'completed', `the flagship BUILD run ended ${status} (approvals granted: ${granted.join('; ')}):\n${await sidebar()}`);
    assert.ok(granted.some((g) => /^coder-ai: /.test(g)), `coder-ai asked before writing: ${granted.join('; ')}`);
    // coder-ai worked on its own branch: the user's checkout is where it was.
    assert.equal(git(ws, 'rev-parse', 'HEAD'), head);
    assert.match(git(ws, 'branch', '--list', 'cadre/*'), /cadre\//);
  });

  it('a Cadre language-model tool invoked through vscode.lm.invokeTool answers with the finding and its location', async () => {
    const { probeOut } = s;
    await vsc!.openFile('config.js');
    rmSync(probeOut, { force: true });
    await vsc!.runCommand('Cadre Probe: Invoke Cadre Scan Tool');
    // Outside a chat, VS Code shows the tool's confirmation as a dialog: what will run, on what, under which ACMF mode.
    let confirmation = '';
    const result = await vsc!.waitUntil(async () => {
      if (existsSync(probeOut)) return JSON.parse(readFileSync(probeOut, 'utf8')) as { tools: string[]; text?: string; error?: string };
      const dialog = vsc!.page.locator('.monaco-dialog-box').first();
      if (!confirmation && (await dialog.count()) > 0) {
        confirmation = await dialog.innerText();
        await shot('lm-tool-confirmation');
        await dialog.locator('.monaco-button', { hasText: /^(Yes|Continue|Allow|Run|OK)$/ }).first().click();
      }
      return null;
    }, { timeoutMs: 120_000, what: 'the probe extension to write the tool result' });
    assert.match(confirmation, /Run security-ai secrets\?/, confirmation);
    assert.match(confirmation, /on config\.js/, confirmation);
    assert.match(confirmation, /ACMF mode of security-ai: LEARNING/, confirmation);
    for (const t of ['cadre_scanFile', 'cadre_reviewSelection', 'cadre_runReadiness', 'cadre_explainError']) assert.ok(result.tools.includes(t), `${t} registered: ${result.tools.join(', ')}`);
    assert.equal(result.error, undefined, result.error);
    assert.match(result.text ?? '', /config\.js:3:\d+/, result.text);
    assert.match(result.text ?? '', /aws-access-key-id/, result.text);
  });
});
