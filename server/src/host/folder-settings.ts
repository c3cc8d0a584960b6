/**
 * Each folder's own `.cadre.yaml`, for the executions on that folder (multi-root workspaces, issue 17).
 *
 * The engine runs with one configuration (the server's workspace's file, else `$CADRE_HOME/config.yaml`,
 * with the editor's settings over it). An execution whose `source` is another folder with a `.cadre.yaml`
 * of its own runs with that file for what a repository governs: its agents' sections (approval rules,
 * acmf_mode as a cap), the defaults (intelligence and scope of requests that do not set them, protected
 * paths, policies, denied licenses, progression) and policy-ai's and observe-ai's alert rules. What
 * belongs to the install stays the engine's: subscription, security, webhooks, integrations, the
 * language model, the URLs observe-ai may fetch and baseline policy rules turned off (a repository may
 * not widen what Cadre reaches or switch a rule off, as for the first folder: host/runtime.ts).
 *
 * Read synchronously when the engine asks (a step's gates, its ACMF evaluation, planning), cached by
 * the file's mtime and size: an edit applies to the next execution's steps without a restart.
 */
import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { parseConfig, WORKSPACE_CONFIG_FILE } from '../config/load';
import { deepFreeze, type CadreConfig } from '../config/schema';
import type { EngineSettings } from '../engine/settings';

export interface FolderSettingsOptions {
  /** The configuration the engine runs with now (it changes with the editor's settings). */
  engineConfig(): CadreConfig;
  /** The folder whose file the engine's configuration already is (the server's workspace): answered with undefined. */
  engineFolder?: string | undefined;
  /** The editor's tier, which wins over a file's defaults.intelligence as it does for the first folder. */
  intelligence(): string | undefined;
  env: NodeJS.ProcessEnv;
  log(line: string): void;
}

interface Cached {
  mtimeMs: number;
  size: number;
  config: CadreConfig;
  /** The merge, kept while the engine's configuration and the tier are the ones it was made from. */
  merged?: { engine: CadreConfig; intelligence: string | undefined; settings: EngineSettings };
}

export class FolderSettings {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly opts: FolderSettingsOptions) {}

  /**
   * The settings of executions on `source`: undefined when it is the engine's own folder or has no
   * `.cadre.yaml` (the engine's configuration applies). Throws ERR_CONFIG_INVALID (one line per problem,
   * `file:line:col: key: what`) when the folder's file does not validate: nothing runs there until fixed.
   */
  of(source: string): EngineSettings | undefined {
    if (!path.isAbsolute(source)) return undefined;
    if (this.opts.engineFolder && path.resolve(source) === path.resolve(this.opts.engineFolder)) return undefined;
    const file = path.join(source, WORKSPACE_CONFIG_FILE);
    const entry = this.read(file);
    if (!entry) return undefined;
    const engine = this.opts.engineConfig();
    const intelligence = this.opts.intelligence();
    const m = entry.merged;
    if (m && m.engine === engine && m.intelligence === intelligence) return m.settings;
    entry.merged = { engine, intelligence, settings: merge(entry.config, engine, intelligence) };
    return entry.merged.settings;
  }

  private read(file: string): Cached | undefined {
    let st: { mtimeMs: number; size: number; isFile(): boolean } | undefined;
    try {
      st = statSync(file);
    } catch {
      this.cache.delete(file);
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const hit = this.cache.get(file);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit;
    // parseConfig throws ERR_CONFIG_INVALID with positions; the error is not cached, so a fix applies at once.
    const config = parseConfig(readFileSync(file, 'utf8'), file, this.opts.env);
    const entry: Cached = { mtimeMs: st.mtimeMs, size: st.size, config };
    this.cache.set(file, entry);
    this.opts.log(`config: ${file} applies to the executions on ${path.dirname(file)}`);
    if (config.policy.disable.length > 0) this.opts.log(`config: policy.disable in ${file} ignored: only $CADRE_HOME/config.yaml may turn a baseline policy rule off (a repository may waive one)`);
    if (config.observe.urls.length > 0) this.opts.log(`config: observe.urls in ${file} ignored: only $CADRE_HOME/config.yaml may allow fetching URLs`);
    return entry;
  }
}

/** The folder's repository settings over the install's (see the header for which is which). */
function merge(folder: CadreConfig, engine: CadreConfig, intelligence: string | undefined): EngineSettings {
  return deepFreeze({
    ...engine,
    agents: folder.agents,
    defaults: { ...folder.defaults, ...(intelligence ? { intelligence: intelligence as CadreConfig['defaults']['intelligence'] } : {}) },
    observe: { ...folder.observe, urls: engine.observe.urls },
    policy: { ...folder.policy, disable: engine.policy.disable },
  });
}
