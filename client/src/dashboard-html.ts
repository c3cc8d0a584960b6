/**
 * The dashboard webview's HTML: a strict Content Security Policy with a per-load nonce, one local
 * script (dist/webview.js, which bundles @vscode-elements/elements) and one nonce'd style element.
 * No VS Code import, so it is unit-tested in Node (test/unit/webview/dashboard-html.test.ts).
 *
 * Why no 'unsafe-inline' for styles: the elements (Lit) style their shadow roots with constructable
 * stylesheets (adoptedStyleSheets) and set sizes through the CSSOM (`el.style.width = …`); neither
 * is governed by `style-src`. The page's own CSS is the nonce'd <style> below, and the script never
 * writes `style="…"` attributes or <style> elements.
 */
import { randomBytes } from 'node:crypto';

export interface DashboardHtmlOptions {
  /** `webview.cspSource`. */
  cspSource: string;
  /** `webview.asWebviewUri(dist/webview.js)` as a string. */
  scriptUri: string;
  nonce: string;
  /** The state to start from before the script has run (only the title is used). */
  title?: string;
}

/** A fresh nonce: 32 random bytes, base64 without padding (only [A-Za-z0-9+/]). */
export function makeNonce(): string {
  // base64url: valid in a CSP nonce-source, and no '/' that could read as part of a URL.
  return randomBytes(32).toString('base64url');
}

/** The Content-Security-Policy of the dashboard. */
export function dashboardCsp(cspSource: string, nonce: string): string {
  return [
    `default-src 'none'`,
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `base-uri 'none'`,
    `form-action 'none'`,
  ].join('; ');
}

const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Theme-aware CSS: only VS Code's --vscode-* variables (with fallbacks), no colours of our own. */
export const DASHBOARD_CSS = `
:root { color-scheme: light dark; }
body { margin: 0; padding: 0 16px 24px; color: var(--vscode-foreground); background: var(--vscode-editor-background);
  font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
header.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; padding: 10px 0; position: sticky; top: 0; z-index: 1;
  background: var(--vscode-editor-background); border-bottom: 1px solid var(--vscode-panel-border, transparent); }
header.bar h1 { font-size: 1.15em; font-weight: 600; margin: 0 8px 0 0; }
header.bar .spacer { flex: 1; }
header.bar vscode-single-select { min-width: 280px; max-width: 520px; }
.muted { color: var(--vscode-descriptionForeground); }
.error { color: var(--vscode-errorForeground); border: 1px solid var(--vscode-inputValidation-errorBorder, var(--vscode-errorForeground));
  background: var(--vscode-inputValidation-errorBackground, transparent); padding: 6px 10px; margin: 8px 0; }
.error:empty { display: none; }
.section-title { font-weight: 600; margin: 14px 0 6px; }
.summary { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin: 8px 0; }
/* The run picture */
.run { display: grid; gap: 3px; align-items: stretch; margin: 8px 0; overflow-x: auto; }
.run .head { font-weight: 600; color: var(--vscode-descriptionForeground); padding: 2px 4px; text-align: center; }
.run .head.agent { text-align: left; }
.run .agent { padding: 4px 6px; display: flex; flex-direction: column; justify-content: center; min-width: 150px; cursor: pointer;
  border-left: 3px solid var(--state-color); }
.run .agent.selected { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
.run .agent:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
.run .agent .id { font-weight: 600; }
.run .cell { min-width: 84px; min-height: 34px; padding: 3px 4px; display: flex; flex-direction: column; align-items: center; justify-content: center;
  border: 1px solid var(--state-color); background: var(--state-bg); font-size: 0.9em; }
.run .meta { min-width: 110px; padding: 3px 6px; display: flex; flex-direction: column; justify-content: center; font-size: 0.9em; }
.conf { height: 4px; background: var(--vscode-progressBar-background, var(--vscode-focusBorder)); margin-top: 2px; max-width: 100%; }
.conf-track { width: 90px; height: 4px; background: var(--vscode-editorWidget-border, var(--vscode-panel-border, transparent)); }
.state-completed { --state-color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); --state-bg: color-mix(in srgb, var(--vscode-testing-iconPassed, var(--vscode-charts-green)) 22%, transparent); }
.state-running { --state-color: var(--vscode-progressBar-background, var(--vscode-charts-blue)); --state-bg: color-mix(in srgb, var(--vscode-progressBar-background, var(--vscode-charts-blue)) 25%, transparent); }
.state-pending { --state-color: var(--vscode-disabledForeground, var(--vscode-descriptionForeground)); --state-bg: transparent; }
.state-failed { --state-color: var(--vscode-testing-iconFailed, var(--vscode-errorForeground)); --state-bg: color-mix(in srgb, var(--vscode-testing-iconFailed, var(--vscode-errorForeground)) 25%, transparent); }
.state-skipped { --state-color: var(--vscode-disabledForeground, var(--vscode-descriptionForeground)); --state-bg: color-mix(in srgb, var(--vscode-disabledForeground, gray) 12%, transparent); }
.state-running.cell { animation: pulse 1.6s ease-in-out infinite; }
@keyframes pulse { 50% { opacity: 0.6; } }
@media (prefers-reduced-motion: reduce) { .state-running.cell { animation: none; } }
.legend { display: flex; gap: 12px; flex-wrap: wrap; font-size: 0.9em; }
.legend .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border: 1px solid var(--state-color); background: var(--state-bg); vertical-align: middle; }
.gate-pass { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.gate-fail { color: var(--vscode-testing-iconFailed, var(--vscode-errorForeground)); font-weight: 600; }
.gate-not_applicable { color: var(--vscode-descriptionForeground); }
.verified-ok { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); font-weight: 600; }
.verified-broken { color: var(--vscode-testing-iconFailed, var(--vscode-errorForeground)); font-weight: 600; }
code, .mono { font-family: var(--vscode-editor-font-family, monospace); font-size: 0.95em; }
/* The week grid */
.week { border-collapse: collapse; margin: 6px 0 12px; font-size: 0.85em; }
.week th { font-weight: normal; color: var(--vscode-descriptionForeground); padding: 0 4px; text-align: left; white-space: nowrap; }
.week td.h { width: 5px; height: 12px; padding: 0; border-right: 1px solid var(--vscode-editor-background); }
.week td.h.warm { background: var(--vscode-charts-orange, var(--vscode-charts-yellow)); }
.week td.h.cold { background: var(--vscode-editorWidget-border, color-mix(in srgb, var(--vscode-foreground) 10%, transparent)); }
.week td.h.day-start { border-left: 2px solid var(--vscode-editor-background); }
.week td.h.cov { background: var(--vscode-charts-blue); }
.week td.sum { padding-left: 8px; white-space: nowrap; color: var(--vscode-descriptionForeground); }
/* Agents */
.agents { display: grid; grid-template-columns: repeat(auto-fill, minmax(290px, 1fr)); gap: 6px 16px; }
.agent-q { display: flex; align-items: center; gap: 8px; padding: 3px 0; }
.agent-q .name { flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.spark path.line { fill: none; stroke: var(--vscode-charts-blue); stroke-width: 1.5; }
.spark path.base { fill: none; stroke: var(--vscode-editorWidget-border, var(--vscode-descriptionForeground)); stroke-width: 0.5; stroke-dasharray: 2 2; }
.spark circle { fill: var(--vscode-charts-blue); }
.spark.down path.line { stroke: var(--vscode-charts-orange, var(--vscode-charts-red)); }
.spark.down circle { fill: var(--vscode-charts-orange, var(--vscode-charts-red)); }
.trend-up { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.trend-down { color: var(--vscode-charts-orange, var(--vscode-errorForeground)); }
vscode-table { margin: 6px 0 12px; }
vscode-tab-panel { padding-top: 6px; }
`;

/** The whole document. Every URL in it is the webview's own (cspSource); nothing remote. */
export function buildDashboardHtml(opts: DashboardHtmlOptions): string {
  const { cspSource, scriptUri, nonce } = opts;
  if (!/^[A-Za-z0-9+/_-]{16,}$/.test(nonce)) throw new Error('dashboard: the nonce must be 16+ base64 characters');
  const title = escapeText(opts.title ?? 'Cadre Dashboard');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(dashboardCsp(cspSource, nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${title}</title>
<style nonce="${nonce}">${DASHBOARD_CSS}</style>
</head>
<body>
<div id="root"><p class="muted">Loading the Cadre dashboard…</p></div>
<script nonce="${nonce}" src="${escapeAttr(scriptUri)}"></script>
</body>
</html>
`;
}
