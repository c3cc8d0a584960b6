/**
 * The editor's language models for the server's generative agents (llm.provider `editor`): the
 * server sends `cadre/llm.complete`, this answers it with vscode.lm. The user's consent dialog and
 * quota are the editor's; failures go back to the server as errors its agents report.
 */
import * as vscode from 'vscode';
import { ErrorCodes, ResponseError } from 'vscode-languageclient/node';
import type { LlmCompleteRequest } from '../../protocol/lsp';
import { ServerRequests } from '../../protocol/lsp-messages';
import type { ServerHost } from './server-host';

export function registerLlmRelay(host: ServerHost): vscode.Disposable {
  return host.onRequest(ServerRequests.llmComplete, async (p): Promise<LlmCompleteRequest.Result> => {
    const family = vscode.workspace.getConfiguration('cadre').get<string>('llm.editorModelFamily', '');
    const models = await vscode.lm.selectChatModels(family ? { family } : {});
    const model = models[0];
    if (!model) throw new ResponseError(ErrorCodes.InternalError, `no language model is available in the editor${family ? ` for family "${family}"` : ''}`);
    // vscode.lm has no system role: the system prompt leads the first user message.
    const system = p.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
    const rest = p.messages.filter((m) => m.role !== 'system');
    const messages = rest.map((m, i) => {
      const content = i === 0 && system ? `${system}\n\n${m.content}` : m.content;
      return m.role === 'assistant' ? vscode.LanguageModelChatMessage.Assistant(content) : vscode.LanguageModelChatMessage.User(content);
    });
    if (messages.length === 0 && system) messages.push(vscode.LanguageModelChatMessage.User(system));
    const cts = new vscode.CancellationTokenSource();
    try {
      const response = await model.sendRequest(messages, { justification: 'Cadre\'s generative agents use the editor\'s language model (cadre.llm.provider "editor", or unset while the editor offers a model).' }, cts.token);
      let text = '';
      for await (const chunk of response.text) text += chunk;
      const promptTokens = (await Promise.all(messages.map((m) => model.countTokens(m)))).reduce((a, b) => a + b, 0);
      const completionTokens = await model.countTokens(text);
      return { text, model: `${model.vendor}/${model.family}`, usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens } };
    } catch (err) {
      if (err instanceof vscode.LanguageModelError) throw new ResponseError(ErrorCodes.InternalError, `editor language model: ${err.message} (${err.code})`);
      throw err;
    } finally {
      cts.dispose();
    }
  });
}
