/** SARIF 2.1.0 export of any set of findings. */
import type { Finding, Range, RuleInfo, Severity } from './finding';
import { redactSecretsIn } from './redact';

export const SARIF_SCHEMA = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

export type SarifLevel = 'error' | 'warning' | 'note' | 'none';

/** critical/high → error, medium → warning, low/info → note. */
export function sarifLevel(s: Severity): SarifLevel {
  return s === 'critical' || s === 'high' ? 'error' : s === 'medium' ? 'warning' : 'note';
}

/** security-severity (GitHub code scanning convention), a number as a string. */
const SECURITY_SEVERITY: Record<Severity, string> = { critical: '9.5', high: '8.0', medium: '5.5', low: '3.0', info: '0.0' };

export interface SarifOptions {
  toolName?: string;
  toolVersion?: string;
  informationUri?: string;
  /** Absolute URI of the workspace root (adds originalUriBaseIds.WORKSPACE). */
  workspaceUri?: string;
}

interface SarifRegion { startLine: number; startColumn: number; endLine: number; endColumn: number }

function region(r: Range): SarifRegion {
  return { startLine: r.startLine, startColumn: r.startColumn, endLine: r.endLine, endColumn: r.endColumn };
}

function uri(file: string): string {
  return file.split('/').map(encodeURIComponent).join('/');
}

/** A SARIF 2.1.0 log with one run. Rules not given in `rules` are derived from the findings. */
export function toSarif(findings: readonly Finding[], rules: readonly RuleInfo[] = [], options: SarifOptions = {}): Record<string, unknown> {
  const ruleMap = new Map<string, RuleInfo>(rules.map((r) => [r.id, r]));
  for (const f of findings) {
    if (!ruleMap.has(f.ruleId)) ruleMap.set(f.ruleId, { id: f.ruleId, description: f.ruleId, severity: f.severity });
  }
  const ruleList = [...ruleMap.values()];
  const index = new Map(ruleList.map((r, i) => [r.id, i]));
  const run: Record<string, unknown> = {
    tool: {
      driver: {
        name: options.toolName ?? 'cadre',
        version: options.toolVersion ?? '0.1.0',
        informationUri: options.informationUri ?? 'https://github.com/cadre/cadre',
        rules: ruleList.map((r) => ({
          id: r.id,
          name: r.id.replace(/(^|[-_/])([a-z])/g, (_m, _s: string, c: string) => c.toUpperCase()),
          shortDescription: { text: r.description },
          fullDescription: { text: r.description },
          // Only a documented rule has a help link (docs/skills.md anchors); none beats a dead one.
          ...(r.helpUri ? { helpUri: r.helpUri } : {}),
          defaultConfiguration: { level: sarifLevel(r.severity) },
          properties: { tags: ['security', ...(r.family ? [r.family] : [])], 'security-severity': SECURITY_SEVERITY[r.severity] },
        })),
      },
    },
    columnKind: 'utf16CodeUnits',
    results: findings.map((f) => {
      const physical = (file: string, r: Range) => ({
        artifactLocation: { uri: uri(file), ...(options.workspaceUri ? { uriBaseId: 'WORKSPACE' } : {}) },
        region: region(r),
      });
      const result: Record<string, unknown> = {
        ruleId: f.ruleId,
        ruleIndex: index.get(f.ruleId),
        level: sarifLevel(f.severity),
        // Messages and snippets were redacted by their analyzer; swept once more on the way out.
        message: { text: redactSecretsIn(f.message) },
        locations: [{ physicalLocation: { ...physical(f.file, f.range), ...(f.snippet ? { contextRegion: { ...region(f.range), snippet: { text: redactSecretsIn(f.snippet) } } } : {}) } }],
        partialFingerprints: { 'cadreFingerprint/v1': f.fingerprint },
        properties: { severity: f.severity },
      };
      if (f.fix) {
        const byFile = new Map<string, typeof f.fix.edits>();
        for (const e of f.fix.edits) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
        result.fixes = [{
          description: { text: f.fix.description },
          artifactChanges: [...byFile].map(([file, edits]) => ({
            artifactLocation: { uri: uri(file), ...(options.workspaceUri ? { uriBaseId: 'WORKSPACE' } : {}) },
            replacements: edits.map((e) => ({ deletedRegion: region(e.range), insertedContent: { text: e.newText } })),
          })),
        }];
      }
      return result;
    }),
  };
  if (options.workspaceUri) {
    run.originalUriBaseIds = { WORKSPACE: { uri: options.workspaceUri.endsWith('/') ? options.workspaceUri : `${options.workspaceUri}/` } };
  }
  return { $schema: SARIF_SCHEMA, version: '2.1.0', runs: [run] };
}
