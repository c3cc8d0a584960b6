/**
 * architect-ai `design`: the workspace's stack (languages, package managers, frameworks, test
 * runners, CI, containers), each statement with its evidence, and a component layout from the
 * top-level source folders and the import graph between them.
 */
import * as path from 'node:path';
import { listWorkspaceFiles } from '../debug/analyze';
import { buildImportGraph, stronglyConnected, type ImportGraph } from './graph';
import { WorkspaceFiles } from '../workspace/files';

export interface Detection {
  name: string;
  /** Files or facts that support the statement. */
  evidence: string[];
}

export interface LanguageCount { language: string; files: number; }

export interface StackReport {
  languages: LanguageCount[];
  packageManagers: Detection[];
  frameworks: Detection[];
  testRunners: Detection[];
  ci: Detection[];
  containers: Detection[];
  filesScanned: number;
  manifestsRead: string[];
}

export interface Component {
  name: string;
  path: string;
  files: number;
  languages: string[];
  /** Other components this one imports (from the module graph). */
  dependsOn: string[];
  evidence: string[];
}

export interface LayoutProposal {
  components: Component[];
  /** Components that import each other (cycles between folders). */
  componentCycles: string[][];
  /** Weakly connected clusters of the module graph (modules sharing no import with another cluster). */
  clusters: Array<{ modules: number; components: string[] }>;
  notes: string[];
}

const LANGUAGES: Record<string, string> = {
  '.ts': 'TypeScript', '.tsx': 'TypeScript', '.mts': 'TypeScript', '.cts': 'TypeScript',
  '.js': 'JavaScript', '.jsx': 'JavaScript', '.mjs': 'JavaScript', '.cjs': 'JavaScript',
  '.py': 'Python', '.go': 'Go', '.java': 'Java', '.kt': 'Kotlin', '.rs': 'Rust', '.rb': 'Ruby',
  '.php': 'PHP', '.cs': 'C#', '.c': 'C', '.h': 'C', '.cpp': 'C++', '.cc': 'C++', '.hpp': 'C++',
  '.swift': 'Swift', '.scala': 'Scala', '.vue': 'Vue', '.svelte': 'Svelte', '.sh': 'Shell',
};

const JS_FRAMEWORKS: Record<string, string> = {
  express: 'Express', fastify: 'Fastify', koa: 'Koa', '@nestjs/core': 'NestJS', hapi: 'hapi', '@hapi/hapi': 'hapi',
  react: 'React', vue: 'Vue', next: 'Next.js', nuxt: 'Nuxt', svelte: 'Svelte', '@angular/core': 'Angular',
  electron: 'Electron', 'react-native': 'React Native', '@remix-run/react': 'Remix', astro: 'Astro',
};
const JS_TESTS: Record<string, string> = {
  mocha: 'Mocha', jest: 'Jest', vitest: 'Vitest', ava: 'AVA', jasmine: 'Jasmine', tap: 'node-tap',
  '@playwright/test': 'Playwright', cypress: 'Cypress', karma: 'Karma',
};
const PY_FRAMEWORKS: Record<string, string> = { django: 'Django', flask: 'Flask', fastapi: 'FastAPI', starlette: 'Starlette', tornado: 'Tornado', aiohttp: 'aiohttp' };
const PY_TESTS: Record<string, string> = { pytest: 'pytest', nose2: 'nose2', tox: 'tox' };

function add(list: Detection[], name: string, ev: string) {
  const d = list.find((x) => x.name === name);
  if (d) { if (!d.evidence.includes(ev)) d.evidence.push(ev); } else list.push({ name, evidence: [ev] });
}

const base = (f: string) => f.slice(f.lastIndexOf('/') + 1);

export function detectStack(workspace: string, files: readonly string[] = listWorkspaceFiles(workspace)): StackReport {
  // Manifests inside the workspace only (a package.json linked from elsewhere is not read).
  const confined = new WorkspaceFiles(workspace);
  const read = (f: string): string => { const r = confined.readText(f); return r.ok ? r.text : ''; };
  const manifestsRead: string[] = [];
  const readManifest = (f: string) => { manifestsRead.push(f); return read(f); };
  const counts = new Map<string, number>();
  for (const f of files) {
    const lang = LANGUAGES[path.extname(f).toLowerCase()];
    if (lang) counts.set(lang, (counts.get(lang) ?? 0) + 1);
  }
  const languages = [...counts].map(([language, n]) => ({ language, files: n })).sort((a, b) => b.files - a.files || a.language.localeCompare(b.language));
  const r: StackReport = { languages, packageManagers: [], frameworks: [], testRunners: [], ci: [], containers: [], filesScanned: files.length, manifestsRead };

  const PMS: Record<string, string> = {
    'package-lock.json': 'npm', 'npm-shrinkwrap.json': 'npm', 'yarn.lock': 'Yarn', 'pnpm-lock.yaml': 'pnpm', 'bun.lockb': 'Bun',
    'requirements.txt': 'pip', 'pyproject.toml': 'pyproject (pip/Poetry)', 'poetry.lock': 'Poetry', 'Pipfile': 'Pipenv', 'setup.py': 'setuptools',
    'go.mod': 'Go modules', 'pom.xml': 'Maven', 'build.gradle': 'Gradle', 'build.gradle.kts': 'Gradle', 'Cargo.toml': 'Cargo', 'Gemfile': 'Bundler', 'composer.json': 'Composer',
  };
  for (const f of files) {
    const b = base(f);
    const pm = PMS[b];
    if (pm) add(r.packageManagers, pm, f);
    if (b === 'package.json' && !files.some((x) => path.posix.dirname(x) === path.posix.dirname(f) && ['package-lock.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lockb'].includes(base(x)))) {
      add(r.packageManagers, 'npm', `${f} (no lock file)`);
    }
  }

  for (const f of files) {
    const b = base(f);
    if (b === 'package.json') {
      let pkg: { dependencies?: Record<string, string>; devDependencies?: Record<string, string>; peerDependencies?: Record<string, string>; scripts?: Record<string, string> } = {};
      try { pkg = JSON.parse(readManifest(f)); } catch { continue; }
      const deps = { ...pkg.peerDependencies, ...pkg.devDependencies, ...pkg.dependencies };
      for (const [dep, ver] of Object.entries(deps)) {
        const fw = JS_FRAMEWORKS[dep];
        if (fw) add(r.frameworks, fw, `${f}: ${dep}@${ver}`);
        const t = JS_TESTS[dep];
        if (t) add(r.testRunners, t, `${f}: ${dep}@${ver}`);
      }
      const testScript = pkg.scripts?.['test'];
      if (testScript) {
        for (const [dep, t] of Object.entries(JS_TESTS)) if (new RegExp(`(^|[\\s/])${dep.replace(/[@/]/g, (c) => `\\${c}`)}(\\s|$)`).test(testScript)) add(r.testRunners, t, `${f}: scripts.test = ${testScript}`);
        if (/node\s+--test/.test(testScript)) add(r.testRunners, 'node:test', `${f}: scripts.test = ${testScript}`);
      }
    } else if (b === 'requirements.txt' || b === 'pyproject.toml' || b === 'Pipfile' || b === 'setup.py') {
      const text = readManifest(f).toLowerCase();
      for (const [dep, fw] of Object.entries(PY_FRAMEWORKS)) if (new RegExp(`(^|[\\s"'\\[,])${dep}\\b`, 'm').test(text)) add(r.frameworks, fw, `${f}: ${dep}`);
      for (const [dep, t] of Object.entries(PY_TESTS)) if (new RegExp(`(^|[\\s"'\\[,])${dep}\\b`, 'm').test(text)) add(r.testRunners, t, `${f}: ${dep}`);
    } else if (b === 'pom.xml' || b === 'build.gradle' || b === 'build.gradle.kts') {
      const text = readManifest(f);
      if (/spring-boot|org\.springframework/.test(text)) add(r.frameworks, 'Spring', `${f}: spring dependency`);
      if (/quarkus/.test(text)) add(r.frameworks, 'Quarkus', `${f}: quarkus dependency`);
      if (/junit/i.test(text)) add(r.testRunners, 'JUnit', `${f}: junit dependency`);
    } else if (b === 'go.mod') {
      const text = readManifest(f);
      for (const [mod, fw] of [['github.com/gin-gonic/gin', 'Gin'], ['github.com/labstack/echo', 'Echo'], ['github.com/gofiber/fiber', 'Fiber']] as const) if (text.includes(mod)) add(r.frameworks, fw, `${f}: ${mod}`);
    } else if (b === 'Cargo.toml') {
      const text = readManifest(f);
      for (const [c, fw] of [['actix-web', 'Actix Web'], ['axum', 'Axum'], ['rocket', 'Rocket'], ['tokio', 'Tokio']] as const) if (new RegExp(`^\\s*${c}\\s*=`, 'm').test(text)) add(r.frameworks, fw, `${f}: ${c}`);
    } else if (b === 'pytest.ini' || b === 'conftest.py' || b === 'tox.ini') add(r.testRunners, b === 'tox.ini' ? 'tox' : 'pytest', f);
    else if (/^(jest|vitest|karma|playwright|cypress)\.config\.[cm]?[jt]s$/.test(b) || /^\.mocharc/.test(b)) {
      const name = b.startsWith('.mocharc') ? 'Mocha' : ({ jest: 'Jest', vitest: 'Vitest', karma: 'Karma', playwright: 'Playwright', cypress: 'Cypress' } as Record<string, string>)[b.split('.')[0]!]!;
      add(r.testRunners, name, f);
    }
  }
  const goTests = files.filter((f) => f.endsWith('_test.go'));
  if (goTests.length) add(r.testRunners, 'go test', `${goTests.length} *_test.go files (e.g. ${goTests[0]})`);
  const cargo = files.find((f) => base(f) === 'Cargo.toml');
  if (cargo) add(r.testRunners, 'cargo test', cargo);
  const manage = files.find((f) => base(f) === 'manage.py');
  if (manage && /django/i.test(read(manage))) add(r.frameworks, 'Django', `${manage}: django management script`);

  for (const f of files) {
    if (/^\.github\/workflows\/[^/]+\.ya?ml$/.test(f)) add(r.ci, 'GitHub Actions', f);
    else if (f === '.gitlab-ci.yml') add(r.ci, 'GitLab CI', f);
    else if (f === 'Jenkinsfile') add(r.ci, 'Jenkins', f);
    else if (f === '.circleci/config.yml') add(r.ci, 'CircleCI', f);
    else if (f === 'azure-pipelines.yml') add(r.ci, 'Azure Pipelines', f);
    else if (f === '.travis.yml') add(r.ci, 'Travis CI', f);
    else if (f === 'bitbucket-pipelines.yml') add(r.ci, 'Bitbucket Pipelines', f);
    const b = base(f);
    if (/^Dockerfile(\..+)?$|\.Dockerfile$|^Containerfile$/.test(b)) add(r.containers, 'Docker', f);
    else if (/^(docker-)?compose(\.[\w-]+)?\.ya?ml$/.test(b)) add(r.containers, 'Docker Compose', f);
    else if (/\.ya?ml$/.test(b) && !f.startsWith('.github/')) {
      const text = read(f);
      if (/^apiVersion:\s*\S+/m.test(text) && /^kind:\s*(Deployment|Service|StatefulSet|DaemonSet|Pod|Ingress|ConfigMap|CronJob|Job)\b/m.test(text)) add(r.containers, 'Kubernetes', f);
    } else if (b === 'Chart.yaml') add(r.containers, 'Helm', f);
  }
  return r;
}

const SOURCE_ROOTS = new Set(['src', 'lib', 'app', 'packages', 'apps', 'services', 'internal', 'pkg', 'cmd', 'server', 'client']);
const NON_SOURCE = new Set(['test', 'tests', '__tests__', 'spec', 'docs', 'doc', 'scripts', 'fixtures', 'examples', '.github', 'public', 'static', 'assets']);

/** The component a source file belongs to: `src/<x>` under a source root, else its top-level folder. */
export function componentOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts.length < 2) return undefined;
  if (NON_SOURCE.has(parts[0]!)) return undefined;
  if (SOURCE_ROOTS.has(parts[0]!) && parts.length >= 3) return `${parts[0]}/${parts[1]}`;
  return parts[0];
}

export function proposeLayout(workspace: string, files: readonly string[], graph: ImportGraph = buildImportGraph(workspace, { files })): LayoutProposal {
  const comps = new Map<string, Component>();
  for (const f of files) {
    const lang = LANGUAGES[path.extname(f).toLowerCase()];
    if (!lang) continue;
    const c = componentOf(f);
    if (!c) continue;
    const comp = comps.get(c) ?? { name: c.split('/').pop()!, path: c, files: 0, languages: [], dependsOn: [], evidence: [] };
    comp.files++;
    if (!comp.languages.includes(lang)) comp.languages.push(lang);
    comps.set(c, comp);
  }
  const deps = new Map<string, Map<string, number>>();
  for (const e of graph.edges) {
    const a = componentOf(e.from);
    const b = componentOf(e.to);
    if (!a || !b || a === b) continue;
    const m = deps.get(a) ?? new Map<string, number>();
    m.set(b, (m.get(b) ?? 0) + 1);
    deps.set(a, m);
  }
  for (const c of comps.values()) {
    c.evidence.push(`${c.files} source files under ${c.path}/ (${c.languages.join(', ')})`);
    for (const [b, n] of [...(deps.get(c.path) ?? [])].sort()) {
      c.dependsOn.push(b);
      c.evidence.push(`${n} import${n > 1 ? 's' : ''} from ${c.path}/ into ${b}/`);
    }
  }
  const compOut = new Map<string, Set<string>>([...comps.keys()].map((k) => [k, new Set(comps.get(k)!.dependsOn)]));
  const componentCycles = stronglyConnected([...comps.keys()].sort(), compOut).filter((s) => s.length > 1);
  // Weakly connected clusters of the module graph (union-find).
  const parent = new Map<string, string>(graph.modules.map((m) => [m, m]));
  const find = (x: string): string => { let p = parent.get(x)!; while (p !== parent.get(p)) p = parent.get(p)!; parent.set(x, p); return p; };
  for (const e of graph.edges) { const a = find(e.from); const b = find(e.to); if (a !== b) parent.set(a, b); }
  const groups = new Map<string, string[]>();
  for (const m of graph.modules) { const r = find(m); groups.set(r, [...(groups.get(r) ?? []), m]); }
  const clusters = [...groups.values()].filter((g) => g.length > 1)
    .map((g) => ({ modules: g.length, components: [...new Set(g.map(componentOf).filter((x): x is string => !!x))].sort() }))
    .sort((a, b) => b.modules - a.modules);
  const notes: string[] = [];
  if (!comps.size) notes.push('no source folders found: the layout cannot be derived from the workspace');
  for (const cyc of componentCycles) notes.push(`components ${cyc.join(', ')} import each other: merge them or extract the shared part into a lower component`);
  const standalone = [...comps.values()].filter((c) => !c.dependsOn.length && ![...comps.values()].some((o) => o.dependsOn.includes(c.path)));
  if (comps.size > 1 && standalone.length) notes.push(`independent components (no imports in or out): ${standalone.map((c) => c.path).join(', ')}`);
  return { components: [...comps.values()].sort((a, b) => a.path.localeCompare(b.path)), componentCycles, clusters, notes };
}
