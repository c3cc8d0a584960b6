/**
 * review-ai speed on a generated 5,000-line TypeScript file, as a ratio to parsing the file alone
 * (ts.createSourceFile) in the same run. Run: node --import tsx bench/review.ts [lines]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { analyzeJsTs, DEFAULT_OPTIONS } from '../server/src/skills/review/analyze';
import { runReview } from '../server/src/skills/review/index';

/** Deterministic TypeScript: classes, functions with branches and loops, a few planted findings. */
export function generateSource(lines: number): string {
  const out: string[] = ["import { exec } from 'node:child_process';", ''];
  let i = 0;
  while (out.length < lines) {
    i++;
    if (i % 5 === 0) {
      out.push(`export class Service${i} {`, '  private count = 0;', `  handle(input: string[], flag?: boolean): number {`,
        '    for (const item of input) {', '      if (item.length > 3 && flag) this.count++;', '      else this.count += item ? 1 : 0;',
        '    }', '    return this.count;', '  }', '}', '');
    } else {
      out.push(`export function step${i}(a: number, b: string | null, list: number[]): number {`,
        '  let total = 0;',
        '  for (let k = 0; k < list.length; k++) {',
        '    const v = list[k] ?? 0;',
        "    if (v > a || b === 'x') total += v;",
        '    else if (v < 0) total -= v;',
        '  }',
        '  switch (b) {',
        "    case 'a': total++; break;",
        "    case 'b': total--; break;",
        '    default: break;',
        '  }',
        `  const label = \`step${i}: \${total}\`;`,
        i % 50 === 1 ? '  console.log(label);' : '  void label;',
        i % 97 === 0 ? '  exec(`echo ${b}`);' : '  void b;',
        '  return total > 100 ? total : a;',
        '}',
        '');
    }
  }
  return out.slice(0, lines).join('\n') + '\n';
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Times the variants interleaved (A, B, C, A, B, C...) so machine-load drift hits them alike; medians in ms. */
function timeInterleaved(runs: number, fns: Array<() => void>): number[] {
  for (let i = 0; i < 3; i++) for (const fn of fns) fn(); // warm-up
  const xs: number[][] = fns.map(() => []);
  for (let i = 0; i < runs; i++) {
    fns.forEach((fn, j) => {
      const t = process.hrtime.bigint();
      fn();
      xs[j]!.push(Number(process.hrtime.bigint() - t) / 1e6);
    });
  }
  return xs.map(median);
}

export function runReviewBench(lines = 5000, runs = 21): { parseMs: number; analyzeMs: number; skillMs: number; ratio: number; findings: number } {
  const text = generateSource(lines);
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-review-bench-'));
  try {
    writeFileSync(path.join(dir, 'big.ts'), text);
    let findings = 0;
    const plan = { mode: 'files' as const, targets: [{ file: 'big.ts', changed: null }], allFiles: ['big.ts'] };
    const [parseMs, analyzeMs, skillMs] = timeInterleaved(runs, [
      () => void ts.createSourceFile('big.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS),
      () => { findings = analyzeJsTs('big.ts', text, null, DEFAULT_OPTIONS).findings.length; },
      () => void runReview(dir, plan, DEFAULT_OPTIONS),
    ]) as [number, number, number];
    const ratio = analyzeMs / parseMs;
    console.log(`review-ai on a ${lines}-line TypeScript file (median of ${runs}):`);
    console.log(`  parse alone (ts.createSourceFile)      ${parseMs.toFixed(2)} ms`);
    console.log(`  review analysis (parse + all checks)   ${analyzeMs.toFixed(2)} ms  ratio ${ratio.toFixed(2)}x`);
    console.log(`  full review (read, suppressions, SARIF) ${skillMs.toFixed(2)} ms  ratio ${(skillMs / parseMs).toFixed(2)}x`);
    console.log(`  findings: ${findings}`);
    return { parseMs, analyzeMs, skillMs, ratio, findings };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.basename(process.argv[1]).startsWith('review')) runReviewBench(Number(process.argv[2]) || 5000);
