// Test-only (test/e2e/user-flows.e2e.test.ts): calls Cadre's `cadre_scanFile` language-model tool through
// the public `vscode.lm.invokeTool`, the way an agent in chat does, and writes the outcome to the file
// named by CADRE_PROBE_OUT (a JSON object: the registered tools, the tool's text parts, or the error).
'use strict';
const fs = require('node:fs');
const vscode = require('vscode');

function write(result) {
  const out = process.env.CADRE_PROBE_OUT;
  if (out) fs.writeFileSync(out, JSON.stringify(result, null, 2));
}

function activate(context) {
  context.subscriptions.push(vscode.commands.registerCommand('cadreProbe.invokeScanTool', async () => {
    const tools = (vscode.lm.tools || []).map((t) => t.name);
    if (typeof vscode.lm.invokeTool !== 'function') return write({ tools, error: 'vscode.lm.invokeTool is not available in this VS Code' });
    const file = vscode.window.activeTextEditor && vscode.window.activeTextEditor.document.uri.fsPath;
    const cts = new vscode.CancellationTokenSource();
    try {
      const r = await vscode.lm.invokeTool('cadre_scanFile', { input: file ? { filePath: file } : {}, toolInvocationToken: undefined }, cts.token);
      const text = r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : typeof p.value === 'string' ? p.value : JSON.stringify(p))).join('\n');
      write({ tools, text });
    } catch (err) {
      write({ tools, error: String((err && err.message) || err) });
    }
  }));
}

module.exports = { activate, deactivate() {} };
