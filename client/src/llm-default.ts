/**
 * The editor's language model by default: when `cadre.llm.provider` is not set anywhere (user,
 * workspace or folder) and the editor offers a chat model, the generative agents use it through the
 * relay (provider `editor`, llm-relay.ts); `none` set explicitly keeps them model-free. VS Code asks
 * the person for consent the first time the relay sends a request (with the relay's justification).
 *
 * A status bar item says which model the agents use (or that they use none, and why), so the
 * choice made for the user is visible; clicking it opens "Select Language Model Provider".
 */
import * as vscode from 'vscode';
import { ClientCommands } from '../../protocol/lsp';
import { explicitValue } from './explicit-setting';

export type LlmProvider = 'none' | 'openai-compatible' | 'editor';

export interface EditorModelInfo {
  /** `vendor/family`, as the relay reports it to the server. */
  label: string;
  name: string;
}

/** The provider the settings name explicitly (user, workspace or folder), or undefined when unset. */
export function explicitProvider(settings: vscode.WorkspaceConfiguration = vscode.workspace.getConfiguration('cadre')): LlmProvider | undefined {
  return explicitValue(settings.inspect<LlmProvider>('llm.provider'));
}

/** The provider the server starts with: the explicit one, else `editor` when the editor has a model, else `none`. */
export function effectiveProvider(explicit: LlmProvider | undefined, editorModel: EditorModelInfo | null): LlmProvider {
  return explicit ?? (editorModel ? 'editor' : 'none');
}

/** The chat model the relay would use now (family from `cadre.llm.editorModelFamily`), or null. */
export async function editorModel(timeoutMs = 3_000): Promise<EditorModelInfo | null> {
  if (typeof vscode.lm?.selectChatModels !== 'function') return null;
  const family = vscode.workspace.getConfiguration('cadre').get<string>('llm.editorModelFamily', '');
  const pick = vscode.lm.selectChatModels(family ? { family } : {}).then((models) => models[0] ?? null, () => null);
  const timeout = new Promise<null>((r) => setTimeout(() => r(null), timeoutMs));
  const m = await Promise.race([pick, timeout]);
  return m ? { label: `${m.vendor}/${m.family}`, name: m.name } : null;
}

/**
 * Follows the editor's models: the current one is kept for `launchOptions`, the status item shows
 * the agents' model, and `onDefaultChanged` fires when an unset provider now resolves differently
 * (a model appeared or went away), which needs a server restart as any llm setting does.
 */
export class DefaultModel implements vscode.Disposable {
  private current: EditorModelInfo | null = null;
  private readonly item = vscode.window.createStatusBarItem('cadre.model', vscode.StatusBarAlignment.Left, 98);
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDefaultChanged = this.changed.event;
  private readonly subs: vscode.Disposable[] = [];

  constructor() {
    this.item.name = 'Cadre Language Model';
    this.item.command = ClientCommands.selectLlmProvider;
    if (typeof vscode.lm?.onDidChangeChatModels === 'function') {
      this.subs.push(vscode.lm.onDidChangeChatModels(() => void this.refresh()));
    }
    this.subs.push(vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('cadre.llm')) void this.refresh(false);
    }));
  }

  get model(): EditorModelInfo | null {
    return this.current;
  }

  /** Looks the editor's model up again; `notify`: fire when the unset provider's resolution changed. */
  async refresh(notify = true): Promise<void> {
    const before = effectiveProvider(explicitProvider(), this.current);
    this.current = await editorModel();
    const after = effectiveProvider(explicitProvider(), this.current);
    this.render();
    if (notify && before !== after && explicitProvider() === undefined) this.changed.fire();
  }

  private render(): void {
    const settings = vscode.workspace.getConfiguration('cadre');
    const explicit = explicitProvider(settings);
    const provider = effectiveProvider(explicit, this.current);
    if (provider === 'editor') {
      this.item.text = `$(sparkle) Cadre: ${this.current?.name ?? 'editor model'}`;
      this.item.tooltip = this.current
        ? `Cadre's generative agents use the editor's model ${this.current.label}${explicit ? '' : ' (cadre.llm.provider is unset: the editor\'s model is the default)'}. VS Code asks for your consent on first use.`
        : 'cadre.llm.provider is "editor" but the editor offers no language model now: generative agents report that no model is available';
    } else if (provider === 'openai-compatible') {
      this.item.text = `$(sparkle) Cadre: ${settings.get<string>('llm.model') || 'openai-compatible'}`;
      this.item.tooltip = `Cadre's generative agents use ${settings.get<string>('llm.baseUrl') || 'the configured endpoint'}`;
    } else {
      this.item.text = '$(circle-slash) Cadre: no model';
      this.item.tooltip = explicit === 'none'
        ? 'cadre.llm.provider is "none": the agents run their embedded, deterministic skills only (the configuration file\'s llm section still applies)'
        : 'The editor offers no language model: the agents run their embedded, deterministic skills only';
    }
    this.item.show();
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.item.dispose();
    this.changed.dispose();
  }
}
