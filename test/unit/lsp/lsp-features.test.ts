import { strict as assert } from 'node:assert';
import { DiagnosticSeverity, type Diagnostic, type WorkDoneProgressReporter } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { EngineEvent } from '../../../protocol/events';
import type { Finding } from '../../../server/src/skills/findings/finding';
import { codeActions } from '../../../server/src/lsp/code-actions';
import { followExecution } from '../../../server/src/lsp/commands';
import { cadreData, toDiagnostic, toLspRange, toLspSeverity } from '../../../server/src/lsp/diagnostics';
import { DocumentScanner, documentFile } from '../../../server/src/lsp/document-scanner';

const finding: Finding = {
  ruleId: 'aws-access-key-id', severity: 'critical', message: 'AWS access key id found', file: 'src/a.js',
  range: { startLine: 2, startColumn: 14, endLine: 2, endColumn: 34 }, fingerprint: 'fp1',
  fix: { description: 'use the environment', edits: [{ file: 'src/a.js', range: { startLine: 2, startColumn: 13, endLine: 2, endColumn: 35 }, newText: 'process.env.X' }] },
};

describe('lsp: findings as diagnostics', () => {
  it('maps severities', () => {
    assert.equal(toLspSeverity('critical'), DiagnosticSeverity.Error);
    assert.equal(toLspSeverity('high'), DiagnosticSeverity.Error);
    assert.equal(toLspSeverity('medium'), DiagnosticSeverity.Warning);
    assert.equal(toLspSeverity('low'), DiagnosticSeverity.Information);
    assert.equal(toLspSeverity('info'), DiagnosticSeverity.Hint);
  });

  it('converts 1-based exclusive-end ranges to 0-based LSP ranges', () => {
    assert.deepEqual(toLspRange(finding.range), { start: { line: 1, character: 13 }, end: { line: 1, character: 33 } });
  });

  it('builds a Cadre diagnostic with rule code, docs link and data', () => {
    const d = toDiagnostic(finding);
    assert.equal(d.source, 'Cadre');
    assert.equal(d.code, 'aws-access-key-id');
    assert.equal(d.codeDescription?.href, 'https://github.com/cadre/cadre/blob/main/docs/skills.md#aws-access-key-id');
    assert.deepEqual(cadreData(d), { fingerprint: 'fp1', fix: finding.fix });
    assert.equal(cadreData({ ...d, source: 'eslint' }), null);
  });

  it('names documents workspace-relative', () => {
    assert.equal(documentFile('file:///ws/src/a.js', '/ws'), 'src/a.js');
    assert.equal(documentFile('file:///elsewhere/b.py', '/ws'), 'b.py');
    assert.equal(documentFile('untitled:Untitled-1', undefined), 'Untitled-1');
  });
});

describe('lsp: code actions', () => {
  const uri = 'file:///ws/src/a.js';
  const d = toDiagnostic(finding);
  const base = { textDocument: { uri }, context: { diagnostics: [d] as Diagnostic[] } };

  it('offers the preferred quick fix for a diagnostic in range, then the source actions', () => {
    const actions = codeActions({ ...base, range: { start: { line: 1, character: 20 }, end: { line: 1, character: 20 } } }, 'src/a.js', '/ws');
    assert.equal(actions[0]!.kind, 'quickfix');
    assert.equal(actions[0]!.isPreferred, true);
    assert.deepEqual(actions[0]!.edit?.changes?.[uri], [{ range: { start: { line: 1, character: 12 }, end: { line: 1, character: 34 } }, newText: 'process.env.X' }]);
    assert.equal(actions.filter((a) => a.command).length, 5);
  });

  it('skips fixes outside the range and honours context.only', () => {
    const away = { start: { line: 9, character: 0 }, end: { line: 9, character: 0 } };
    assert.equal(codeActions({ ...base, range: away }, 'src/a.js', '/ws').filter((a) => a.kind === 'quickfix').length, 0);
    const only = codeActions({ ...base, range: d.range, context: { diagnostics: [d], only: ['quickfix'] } }, 'src/a.js', '/ws');
    assert.deepEqual(only.map((a) => a.kind), ['quickfix']);
  });
});

describe('lsp: document scanner', () => {
  it('debounces changes and scans one document per tick', async () => {
    const docs = new Map<string, TextDocument>();
    const secret = ['AK', 'IA', 'QWERTYUPASDFGHJK'].join('');
    for (const n of ['a', 'b']) docs.set(`file:///ws/${n}.js`, TextDocument.create(`file:///ws/${n}.js`, 'javascript', 1, `const key = "${secret}";\n`));
    const published: Array<{ uri: string; n: number }> = [];
    const scanner = new DocumentScanner({ get: (u) => docs.get(u), publish: (uri, ds) => published.push({ uri, n: ds.length }), workspaceDir: () => '/ws', log: () => {}, debounceMs: 20 });
    scanner.debounced('file:///ws/a.js');
    scanner.debounced('file:///ws/a.js');
    scanner.now('file:///ws/b.js');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(published, [{ uri: 'file:///ws/b.js', n: 1 }]);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(published, [{ uri: 'file:///ws/b.js', n: 1 }, { uri: 'file:///ws/a.js', n: 1 }]);
    scanner.close('file:///ws/a.js');
    assert.deepEqual(published[2], { uri: 'file:///ws/a.js', n: 0 });
    assert.equal(scanner.pending, 0);
    scanner.dispose();
  });
});

describe('lsp: execution progress', () => {
  it('drives begin, reports and end from engine events, without duplicates from the replay', async () => {
    const calls: string[] = [];
    const reporter: WorkDoneProgressReporter = {
      begin: (title: string) => void calls.push(`begin ${title}`),
      report: (a: number | string, b?: string) => void calls.push(`report ${a} ${b ?? ''}`.trim()),
      done: () => void calls.push('end'),
    } as WorkDoneProgressReporter;
    const base = { execution_id: 'x1', ts: '' };
    const early = { ...base, seq: 1, type: 'phase_started', phase: 'Research', agent_id: 'security-ai' } as unknown as EngineEvent;
    let listener: ((e: EngineEvent) => void) | undefined;
    let finished = false;
    const source = { replay: async () => [early], subscribe: (l: (e: EngineEvent) => void) => ((listener = l), () => (listener = undefined)), isFinished: () => finished };
    followExecution(source, reporter, 'scan');
    listener!(early);
    listener!({ ...base, seq: 2, type: 'work_progress', phase: 'Research', progress: 50, confidence: 0, agent_id: 'security-ai' } as unknown as EngineEvent);
    await new Promise((r) => setImmediate(r));
    finished = true;
    listener!({ ...base, seq: 3, type: 'execution_completed', status: 'completed' } as unknown as EngineEvent);
    assert.deepEqual(calls, ['begin scan', 'report 0 security-ai: Research', 'report 10 security-ai: Research 50%', 'end']);
    assert.equal(listener, undefined);
  });
});
