import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SkillContext, StepRequest } from '../../../../server/src/engine/rigor/skill';
import {
  architectureSkills, buildImportGraph, designSkill, detectStack, globToRegExp, godModules, jsImports, proposeLayout, pyImports,
  stronglyConnected, validateArchitecture, validateSkill, type ArchitectureValidation,
} from '../../../../server/src/skills/architecture';
import { skills } from '../../../../server/src/skills/builtin';

const FIX = path.resolve(__dirname, '../../../fixtures/architecture');
const NODE = path.join(FIX, 'node-app');
const PY = path.join(FIX, 'python-app');
const LAYERS = ['src/ui/**', 'src/app/**', 'src/domain/**', 'src/infra/**'];

function ctx(action: string, workspace: string | undefined, input: Record<string, unknown> = {}): SkillContext {
  const request: StepRequest = {
    executionId: 'exec-1', step: 0, agentId: 'architect-ai', action, goal: { id: 'goal-a', prompt: 'check the architecture' }, input,
    scope: 'workspace' as StepRequest['scope'], tier: 'standard' as StepRequest['tier'], previous: [], ...(workspace ? { workspace } : {}),
  };
  return { request, signal: new AbortController().signal, progress() {}, allowed: () => true, once: (_k, f) => f() };
}

describe('architect-ai skills', () => {
  describe('stack detection', () => {
    it('detects languages, npm, frameworks, test runner, CI and containers of a Node fixture, with evidence', () => {
      const s = detectStack(NODE);
      assert.deepEqual(s.languages.map((l) => l.language), ['TypeScript', 'JavaScript']);
      assert.equal(s.languages[0]!.files, 6);
      assert.equal(s.languages[1]!.files, 1, 'node_modules is skipped');
      assert.deepEqual(s.packageManagers.map((p) => p.name), ['npm']);
      assert.deepEqual(s.packageManagers[0]!.evidence, ['package-lock.json']);
      assert.deepEqual(s.frameworks.map((f) => f.name).sort(), ['Express', 'React']);
      assert.match(s.frameworks.find((f) => f.name === 'Express')!.evidence[0]!, /package\.json: express@\^4/);
      assert.deepEqual(s.testRunners.map((t) => t.name), ['Jest']);
      assert.deepEqual(s.ci, [{ name: 'GitHub Actions', evidence: ['.github/workflows/ci.yml'] }]);
      assert.deepEqual(s.containers.map((c) => c.name).sort(), ['Docker', 'Kubernetes']);
    });

    it('detects a Python / Flask / pytest / GitLab CI workspace', () => {
      const s = detectStack(PY);
      assert.deepEqual(s.languages, [{ language: 'Python', files: 4 }]);
      assert.deepEqual(s.packageManagers.map((p) => p.name), ['pip']);
      assert.deepEqual(s.frameworks.map((f) => f.name), ['Flask']);
      assert.deepEqual(s.testRunners.map((t) => t.name), ['pytest']);
      assert.deepEqual(s.ci.map((c) => c.name), ['GitLab CI']);
      assert.deepEqual(s.containers, []);
    });

    it('proposes components from the source folders with their import dependencies', () => {
      const files = ['src/ui/view.ts', 'src/app/service.ts', 'src/app/helper.ts', 'src/domain/index.ts', 'src/domain/model.ts', 'src/infra/db.ts', 'src/infra/config.js'];
      const layout = proposeLayout(NODE, files);
      assert.deepEqual(layout.components.map((c) => c.path), ['src/app', 'src/domain', 'src/infra', 'src/ui']);
      const ui = layout.components.find((c) => c.path === 'src/ui')!;
      assert.deepEqual(ui.dependsOn, ['src/app']);
      assert.ok(ui.evidence.some((e) => /import from src\/ui\/ into src\/app\//.test(e)));
      assert.deepEqual(layout.components.find((c) => c.path === 'src/infra')!.dependsOn, ['src/domain']);
      assert.deepEqual(layout.componentCycles, []);
    });
  });

  describe('import graph', () => {
    it('parses JS/TS imports, requires, re-exports and dynamic imports, not commented ones', () => {
      const specs = jsImports(`import a from './a';\nimport type { B } from "./b";\n// import c from './c';\n/* import d from './d' */\nexport * from './e';\nconst f = require('./f');\nconst g = await import('./g');\nimport './h';\nconst s = "http://x//y";\n`);
      assert.deepEqual(specs, [
        { spec: './a', line: 1 }, { spec: './b', line: 2 }, { spec: './e', line: 5 }, { spec: './f', line: 6 }, { spec: './g', line: 7 }, { spec: './h', line: 8 },
      ]);
    });

    it('parses Python imports', () => {
      assert.deepEqual(pyImports('import os, app.util as u\nfrom .models import User, Role\nfrom . import util\n# import nope\n'), [
        { module: 'os', names: [], line: 1 }, { module: 'app.util', names: [], line: 1 },
        { module: '.models', names: ['User', 'Role'], line: 2 }, { module: '.', names: ['util'], line: 3 },
      ]);
    });

    it('resolves relative imports with extensions, index files, .js→.ts and require; ignores packages', () => {
      const g = buildImportGraph(NODE);
      const edges = g.edges.map((e) => `${e.from} -> ${e.to}`).sort();
      assert.deepEqual(edges, [
        'src/app/helper.ts -> src/app/service.ts',
        'src/app/helper.ts -> src/domain/model.ts',
        'src/app/service.ts -> src/app/helper.ts',
        'src/app/service.ts -> src/domain/index.ts',
        'src/domain/index.ts -> src/domain/model.ts',
        'src/infra/db.ts -> src/domain/model.ts',
        'src/infra/db.ts -> src/infra/config.js',
        'src/ui/view.ts -> src/app/service.ts',
      ]);
      assert.deepEqual(g.unresolved, []);
    });

    it('finds the cycle and the layering violation of the Node fixture', () => {
      const v = validateArchitecture(NODE, { layers: LAYERS });
      assert.deepEqual(v.cycles, [{ members: ['src/app/helper.ts', 'src/app/service.ts'], cycle: ['src/app/helper.ts', 'src/app/service.ts', 'src/app/helper.ts'] }]);
      assert.deepEqual(v.layeringViolations.map((x) => `${x.from}:${x.line} -> ${x.to}`), ['src/infra/db.ts:1 -> src/domain/model.ts']);
      assert.deepEqual(v.findings.map((f) => `${f.ruleId} ${f.file}:${f.range.startLine}`), ['arch/cycle src/app/helper.ts:2', 'arch/layering src/infra/db.ts:1']);
      assert.ok(v.findings.every((f) => f.fingerprint.length === 32));
    });

    it('without layers: no layering check, and says so', () => {
      const v = validateArchitecture(NODE);
      assert.equal(v.layeringViolations.length, 0);
      assert.match(v.layeringNote, /no layers given/);
    });

    it('finds a Python cycle through `from . import` and absolute package imports', () => {
      const v = validateArchitecture(PY);
      assert.deepEqual(v.cycles.map((c) => c.members), [['app/routes.py', 'app/util.py']]);
      const g = buildImportGraph(PY);
      assert.ok(g.edges.some((e) => e.from === 'app/routes.py' && e.to === 'app/models.py'));
      assert.ok(!g.edges.some((e) => e.from === 'app/models.py'), 'import os is a package');
    });

    it('Tarjan lists every SCC, including a self-loop and a larger component', () => {
      const out = new Map<string, Set<string>>([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a', 'd'])], ['d', new Set(['d'])], ['e', new Set()]]);
      const sccs = stronglyConnected(['a', 'b', 'c', 'd', 'e'], out).map((s) => s.join(','));
      assert.deepEqual(sccs.sort(), ['a,b,c', 'd', 'e']);
    });

    it('globs match folders at any depth', () => {
      assert.ok(globToRegExp('src/ui/**').test('src/ui/a/b.ts'));
      assert.ok(!globToRegExp('src/ui/**').test('src/uix/a.ts'));
      assert.ok(globToRegExp('**/domain/*.ts').test('pkg/x/domain/m.ts'));
      assert.ok(globToRegExp('src/infra').test('src/infra/db.ts'));
    });
  });

  describe('god modules', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'cadre-arch-'));
      mkdirSync(path.join(dir, 'src'));
      writeFileSync(path.join(dir, 'src/hub.ts'), "import './x';\nimport './y';\nexport const hub = 1;\n");
      for (const n of ['x', 'y']) writeFileSync(path.join(dir, `src/${n}.ts`), 'export {};\n');
      for (const n of ['a', 'b', 'c', 'd']) writeFileSync(path.join(dir, `src/${n}.ts`), "import { hub } from './hub';\nexport default hub;\n");
      writeFileSync(path.join(dir, 'src/long.ts'), Array.from({ length: 40 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n');
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('flags fan-in + fan-out over the threshold and files over the line limit, not at the threshold', () => {
      const g = buildImportGraph(dir);
      assert.deepEqual(godModules(g, { couplingThreshold: 5, maxLines: 30 }).map((m) => [m.module, m.fanIn, m.fanOut, m.lines]), [['src/hub.ts', 4, 2, 3], ['src/long.ts', 0, 0, 40]]);
      assert.deepEqual(godModules(g, { couplingThreshold: 6, maxLines: 40 }), []);
      const v = validateArchitecture(dir, { couplingThreshold: 5, maxLines: 30 });
      assert.deepEqual(v.findings.filter((f) => f.ruleId === 'arch/god-module').map((f) => f.file), ['src/hub.ts', 'src/long.ts']);
    });

    it('validate skill reads thresholds from the input', async () => {
      const c = ctx('validate', dir, { couplingThreshold: 5, maxLines: 1000 });
      const ev = await validateSkill.research(c);
      const a = await validateSkill.generate(c, ev);
      assert.deepEqual((a.data as ArchitectureValidation).godModules.map((m) => m.module), ['src/hub.ts']);
    });
  });

  describe('through the Skill interface', () => {
    it('design: stack and layout with evidence-based confidence', async () => {
      const c = ctx('design', NODE);
      const ev = await designSkill.research(c);
      const actions = await designSkill.propose(c, ev);
      assert.equal(actions[0]!.kind, 'read');
      const a = await designSkill.generate(c, ev);
      assert.equal(a.goalRef, 'goal-a');
      assert.equal(a.unable, undefined);
      assert.match(a.summary, /TypeScript \+ (Express, React|React, Express)/);
      assert.ok(a.confidence > 0.5 && a.confidence < 1);
      assert.match(a.text!, /GitHub Actions/);
      const py = await designSkill.generate(ctx('design', PY), await designSkill.research(ctx('design', PY)));
      assert.ok(py.confidence > 0.5);
      const sparse = mkdtempSync(path.join(tmpdir(), 'cadre-arch-sparse-'));
      try {
        writeFileSync(path.join(sparse, 'main.py'), 'print(1)\n');
        const s = await designSkill.generate(ctx('design', sparse), await designSkill.research(ctx('design', sparse)));
        assert.ok(s.confidence < a.confidence, 'fewer categories found, lower confidence');
        assert.ok(s.confidence < 0.75, `loose files without a manifest are partial evidence: ${s.confidence}`);
        // A small library: a manifest and one source file, no framework, no CI. Their absence is a
        // finding, not missing evidence: the design is confident (it was 0.45 before calibration).
        const lib = mkdtempSync(path.join(tmpdir(), 'cadre-arch-lib-'));
        try {
          writeFileSync(path.join(lib, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0', main: 'index.js' }));
          writeFileSync(path.join(lib, 'index.js'), "'use strict';\nmodule.exports = (a, b) => a + b;\n");
          const l = await designSkill.generate(ctx('design', lib), await designSkill.research(ctx('design', lib)));
          assert.ok(l.confidence >= 0.75, `small library: ${l.confidence} (${l.summary})`);
        } finally { rmSync(lib, { recursive: true, force: true }); }
      } finally { rmSync(sparse, { recursive: true, force: true }); }
    });

    it('validate: findings in data, summary counts', async () => {
      const c = ctx('validate', NODE, { layers: LAYERS });
      const a = await validateSkill.generate(c, await validateSkill.research(c));
      assert.equal(a.summary, '1 import cycles, 1 layering violations, 0 god modules in 7 modules');
      assert.equal((a.data as ArchitectureValidation).findings.length, 2);
      assert.deepEqual(a.findingsBefore, { count: 2, maxSeverity: 2 });
    });

    it('unable without a workspace or without modules', async () => {
      const c = ctx('validate', undefined);
      const a = await validateSkill.generate(c, await validateSkill.research(c));
      assert.ok(a.unable);
      assert.equal(a.confidence, 0);
      const empty = mkdtempSync(path.join(tmpdir(), 'cadre-arch-empty-'));
      try {
        const d = await designSkill.generate(ctx('design', empty), await designSkill.research(ctx('design', empty)));
        assert.match(d.unable!, /no files/);
      } finally { rmSync(empty, { recursive: true, force: true }); }
    });

    it('is registered in the builtin skills', () => {
      assert.equal(architectureSkills.length, 2);
      assert.ok(skills.some((s) => s.agentId === 'architect-ai' && s.action === 'validate'));
    });
  });
});
