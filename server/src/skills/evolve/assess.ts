/**
 * evolve-ai assess: the maturity of a workspace over the criteria of criteria.ts, each check judged on
 * what the repository shows (file and line) and, for release tags, on its git refs (the one git
 * helper, hardened). Ecosystems are detected by manifest: package.json (js), pyproject.toml /
 * setup.py / requirements*.txt / Pipfile (python), go.mod (go), pom.xml / build.gradle (java).
 *
 * A check that cannot be judged for this project (a lock-file duplicate count without an npm lock, git
 * tags outside a git repository) is `null`: it is left out of its criterion's denominator and says
 * why, instead of scoring zero for something the repository could not show either way.
 */
import { runGit, UnsafeRepositoryError } from '../workspace/git';
import { ManifestError, parseGoMod, parsePackageJson, parseRequirements, type PackageJson } from '../maintain/manifests';
import { CRITERIA, levelOf, type Ecosystem } from './criteria';
import {
  CI_FILE, CI_LOOKED_FOR, CI_RUNS_LINT, CI_RUNS_SECURITY_SCAN, CI_RUNS_TESTS, DEP_UPDATE_FILE, DEP_UPDATE_LOOKED_FOR, LOCK_FILE, LOCK_LOOKED_FOR,
  SECURITY_POLICY_FILE, SECURITY_POLICY_LOOKED_FOR, type Located, type RepoIndex,
} from './repo-index';

export interface CheckResult {
  id: string;
  title: string;
  points: number;
  /** Points earned; null when the check could not be judged for this project. */
  earned: number | null;
  evidence: Located[];
  /** What is missing (what was looked for, where), or why it was not judged. */
  missing?: string;
}

export interface CriterionResult {
  id: string;
  title: string;
  weight: number;
  /** 0-100; null when no check of it could be judged. */
  score: number | null;
  checks: CheckResult[];
  evidence: Located[];
  missing: string[];
}

export interface Assessment {
  score: number;
  level: number;
  levelName: string;
  meaning: string;
  ecosystems: Ecosystem[];
  manifests: string[];
  git: { repository: boolean; tags: string[]; note?: string };
  criteria: CriterionResult[];
  examined: { files: number };
}

interface Judged { earned: number | null; evidence?: Located[]; missing?: string }

/** Facts gathered once and read by several checks. */
interface Facts {
  idx: RepoIndex;
  ecosystems: Ecosystem[];
  manifests: string[];
  pkg?: PackageJson;
  ci: string[];
  tests: string[];
  sources: number;
  git: { repository: boolean; tags: string[]; note?: string };
  version?: Located & { value: string };
}

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.-]+)?$/;
const TEST_FILE = /(^|\/)(__tests__|tests?|spec)\/.+\.(js|mjs|cjs|ts|tsx|jsx|py|go|java|kt)$|\.(test|spec)\.[cm]?[jt]sx?$|(^|\/)test_[^/]+\.py$|_test\.(py|go)$|(^|\/)src\/test\/(java|kotlin)\/.+\.(java|kt)$/;
const SOURCE_FILE = /\.([cm]?[jt]sx?|py|go|java|kt)$/;
const ROOT_MANIFESTS: Array<[RegExp, Ecosystem]> = [
  [/^package\.json$/, 'js'], [/^(pyproject\.toml|setup\.py|setup\.cfg|Pipfile|requirements[^/]*\.txt)$/, 'python'], [/^go\.mod$/, 'go'], [/^(pom\.xml|build\.gradle(\.kts)?)$/, 'java'],
];

/** Ecosystems by manifest, at the root first, else one folder down (a repository whose app lives in app/). */
export function detectEcosystems(idx: RepoIndex): { ecosystems: Ecosystem[]; manifests: string[] } {
  for (const depth of [0, 1]) {
    const manifests = idx.files.filter((f) => f.split('/').length === depth + 1 && ROOT_MANIFESTS.some(([re]) => re.test(f.split('/').pop()!)));
    if (manifests.length) {
      const ecosystems = ECOS_ORDER.filter((e) => manifests.some((m) => ROOT_MANIFESTS.some(([re, eco]) => eco === e && re.test(m.split('/').pop()!))));
      return { ecosystems, manifests };
    }
  }
  return { ecosystems: [], manifests: [] };
}
const ECOS_ORDER: Ecosystem[] = ['js', 'python', 'go', 'java'];

const firstOf = (idx: RepoIndex, re: RegExp): Located | undefined => { const f = idx.find(re)[0]; return f ? { file: f, detail: 'present' } : undefined; };
const manifestOf = (f: Facts, name: RegExp) => f.manifests.find((m) => name.test(m.split('/').pop()!));
const ok = (points: number, ...evidence: Array<Located | undefined>): Judged => ({ earned: points, evidence: evidence.filter((e): e is Located => !!e) });
const no = (missing: string): Judged => ({ earned: 0, missing });
const notJudged = (why: string): Judged => ({ earned: null, missing: `not judged: ${why}` });

/** A package.json script line, when the script exists and is not npm's placeholder. */
function script(f: Facts, name: string): Located | undefined {
  const file = f.pkg?.file;
  if (!file) return undefined;
  const hit = f.idx.grepAll(file, new RegExp(`^\\s*"(${name})"\\s*:`)).find((l) => !/no test specified/.test(l.detail));
  return hit;
}

function makefileTarget(f: Facts, target: string): Located | undefined {
  return f.idx.has('Makefile') ? f.idx.grep('Makefile', new RegExp(`^${target}\\s*:`)) : undefined;
}

const ciLine = (f: Facts, re: RegExp) => f.idx.grepFiles(f.ci, re);

type CheckFn = (f: Facts, points: number) => Judged;

const CHECKS: Record<string, CheckFn> = {
  'test-files': (f, p) => {
    if (!f.tests.length) return no(`no test file: looked for *.test.*, *.spec.*, test_*.py, *_test.go, src/test/java/**, test/ and tests/ folders among ${f.idx.files.length} file(s)`);
    const ratio = f.sources ? f.tests.length / f.sources : 1;
    // A handful of tests for a large code base is a start, not the practice: full points from one test file per five sources.
    const earned = Math.round(p * Math.min(1, 0.5 + ratio * 2.5));
    return { earned, evidence: f.tests.slice(0, 3).map((t) => ({ file: t, detail: 'test file' })).concat([{ file: '.', detail: `${f.tests.length} test file(s) for ${f.sources} source file(s)` }]),
      ...(earned < p ? { missing: `few tests for the code: ${f.tests.length} test file(s) for ${f.sources} source file(s) (full points from 1 in 5)` } : {}) };
  },
  'test-script': (f, p) => {
    const hit = script(f, 'test') ?? makefileTarget(f, 'test')
      ?? (f.idx.has('pytest.ini') ? { file: 'pytest.ini', detail: 'present' } : undefined)
      ?? (f.idx.has('pyproject.toml') ? f.idx.grep('pyproject.toml', /^\[tool\.pytest/) : undefined)
      ?? (f.idx.has('tox.ini') ? { file: 'tox.ini', detail: 'present' } : undefined)
      ?? (f.idx.has('setup.cfg') ? f.idx.grep('setup.cfg', /^\[tool:pytest\]/) : undefined);
    if (hit) return ok(p, hit);
    // go test and the build tools' test phases are built in: the command exists when there are tests to run.
    const builtIn = f.ecosystems.find((e) => e === 'go' || e === 'java');
    if (builtIn && f.tests.length) return ok(p, { file: manifestOf(f, builtIn === 'go' ? /^go\.mod$/ : /^(pom\.xml|build\.gradle(\.kts)?)$/)!, detail: builtIn === 'go' ? 'go test is built in' : 'the build tool runs src/test' });
    return no('no test command: looked for a "test" script in package.json, a Makefile test target, pytest.ini, [tool.pytest] in pyproject.toml, tox.ini');
  },
  coverage: (f, p) => {
    const file = firstOf(f.idx, /^(\.nycrc(\.json|\.ya?ml)?|\.c8rc(\.json)?|\.coveragerc|codecov\.ya?ml|\.codecov\.ya?ml|coverage\/(lcov\.info|coverage-final\.json|coverage-summary\.json)|coverage\.xml)$/);
    const hit = file ?? (f.pkg ? f.idx.grep(f.pkg.file, /"(c8|nyc)\b|--coverage|coverageThreshold|vitest[^"]*coverage/) : undefined)
      ?? f.idx.find(/^jest\.config\.[cm]?[jt]s$/).map((j) => f.idx.grep(j, /coverageThreshold|collectCoverage/)).find(Boolean)
      ?? (f.idx.has('pyproject.toml') ? f.idx.grep('pyproject.toml', /^\[tool\.coverage|--cov\b|pytest-cov/) : undefined)
      ?? f.manifests.filter((m) => /(pom\.xml|build\.gradle(\.kts)?)$/.test(m)).map((m) => f.idx.grep(m, /jacoco/)).find(Boolean)
      ?? ciLine(f, /-cover(profile)?\b|--cov\b|codecov|coveralls|\bc8\b|\bnyc\b|jacoco/);
    return hit ? ok(p, hit) : no('no coverage measured: looked for .nycrc, .c8rc, .coveragerc, codecov.yml, coverage reports, jest coverageThreshold, [tool.coverage] / pytest-cov, jacoco, -coverprofile or codecov in CI');
  },
  'ci-config': (f, p) => (f.ci.length ? ok(p, ...f.ci.slice(0, 3).map((c) => ({ file: c, detail: 'CI configuration' }))) : no(`no CI configuration: looked for ${CI_LOOKED_FOR}`)),
  'ci-tests': (f, p) => {
    if (!f.ci.length) return no('no CI configuration to run the tests');
    const hit = ciLine(f, CI_RUNS_TESTS);
    return hit ? ok(p, hit) : no(`the CI configuration (${f.ci.join(', ')}) runs no test command`);
  },
  'ci-lint': (f, p) => {
    if (!f.ci.length) return no('no CI configuration to run a linter');
    const hit = ciLine(f, CI_RUNS_LINT);
    return hit ? ok(p, hit) : no(`the CI configuration (${f.ci.join(', ')}) runs no linter or type check`);
  },
  'lint-config': (f, p) => {
    const hit = firstOf(f.idx, /^(eslint\.config\.[cm]?[jt]s|\.eslintrc(\.(js|cjs|json|ya?ml))?|biome\.jsonc?|ruff\.toml|\.ruff\.toml|\.flake8|\.pylintrc|pylintrc|mypy\.ini|\.golangci\.(ya?ml|toml|json)|checkstyle\.xml|\.prettierrc(\.(js|json|ya?ml))?)$/)
      ?? (f.pkg ? f.idx.grep(f.pkg.file, /^\s*"eslintConfig"\s*:/) : undefined)
      ?? (f.idx.has('pyproject.toml') ? f.idx.grep('pyproject.toml', /^\[tool\.(ruff|pylint|flake8|black|mypy)/) : undefined)
      ?? (f.idx.has('setup.cfg') ? f.idx.grep('setup.cfg', /^\[(flake8|pylint|mypy)/) : undefined)
      ?? f.manifests.filter((m) => /(pom\.xml|build\.gradle(\.kts)?)$/.test(m)).map((m) => f.idx.grep(m, /checkstyle|spotless|spotbugs|\bpmd\b|errorprone/)).find(Boolean);
    return hit ? ok(p, hit) : no('no linter configuration: looked for eslint.config.*, .eslintrc*, biome.json, ruff.toml / [tool.ruff], .flake8, .pylintrc, .golangci.yml, checkstyle / spotless');
  },
  'lint-script': (f, p) => {
    const hit = script(f, 'lint|lint:[^"]*|typecheck') ?? makefileTarget(f, 'lint') ?? ciLine(f, CI_RUNS_LINT);
    return hit ? ok(p, hit) : no('no lint command: looked for a "lint" script in package.json, a Makefile lint target, a linter run in CI');
  },
  readme: (f, p) => {
    const r = readmeOf(f);
    if (!r) return no('no README at the root (README.md, README.rst, README)');
    const lines = (f.idx.text(r) ?? '').split(/\r?\n/).filter((l) => l.trim()).length;
    // A title alone is not documentation: full points from 10 non-empty lines.
    return { earned: lines >= 10 ? p : Math.round(p / 2), evidence: [{ file: r, detail: `${lines} non-empty line(s)` }], ...(lines < 10 ? { missing: `${r} has only ${lines} non-empty line(s)` } : {}) };
  },
  'readme-install': (f, p) => readmeSection(f, p, /^(#+\s*|\.\.\s*)?(installation|installing|install|getting started|setup|set up|quick ?start)\b/i, 'Installation / Getting started section'),
  'readme-usage': (f, p) => readmeSection(f, p, /^(#+\s*)?(usage|examples?|how to use|using|running|run)\b/i, 'Usage / Examples section'),
  'docs-folder': (f, p) => {
    const docs = f.idx.find(/^docs?\/.+\.(md|rst|adoc|txt|html)$/);
    const site = firstOf(f.idx, /^(mkdocs\.ya?ml|docusaurus\.config\.[jt]s|conf\.py|book\.toml)$/);
    return docs.length ? ok(p, { file: docs[0]!, detail: `${docs.length} document(s) under ${docs[0]!.split('/')[0]}/` }) : site ? ok(p, site) : no('no docs/ or doc/ folder with documents, no mkdocs.yml or docusaurus config');
  },
  changelog: (f, p) => {
    const c = changelogOf(f);
    return c ? ok(p, { file: c, detail: 'present' }) : no('no CHANGELOG.md, CHANGES.md, HISTORY.md or NEWS.md at the root');
  },
  'security-policy': (f, p) => { const h = firstOf(f.idx, SECURITY_POLICY_FILE); return h ? ok(p, h) : no(`no security policy: looked for ${SECURITY_POLICY_LOOKED_FOR}`); },
  'dependency-updates': (f, p) => { const h = firstOf(f.idx, DEP_UPDATE_FILE); return h ? ok(p, h) : no(`no automated dependency updates: looked for ${DEP_UPDATE_LOOKED_FOR}`); },
  'security-scan-ci': (f, p) => {
    if (!f.ci.length) return no('no CI configuration to run a security scanner');
    const hit = ciLine(f, CI_RUNS_SECURITY_SCAN);
    return hit ? ok(p, hit) : no(`the CI configuration (${f.ci.join(', ')}) runs no security scanner (CodeQL, npm audit, pip-audit, govulncheck, Trivy, Snyk ...)`);
  },
  lockfile: (f, p) => {
    if (!f.ecosystems.length) return notJudged('no manifest (package.json, pyproject.toml, requirements.txt, go.mod, pom.xml, build.gradle)');
    const locks = f.idx.find(LOCK_FILE);
    const missing: string[] = [];
    const evidence: Located[] = [];
    for (const eco of f.ecosystems) {
      const lock = locks.find((l) => LOCKS_OF[eco].test(l));
      if (lock) { evidence.push({ file: lock, detail: `${eco} lock file` }); continue; }
      if (eco === 'go') {
        const mod = manifestOf(f, /^go\.mod$/)!;
        if (!parseGoMod(mod, f.idx.text(mod) ?? '').requires.length) { evidence.push({ file: mod, detail: 'no requirement to lock' }); continue; }
      }
      if (eco === 'python') {
        const req = manifestOf(f, /^requirements\.txt$/);
        const reqs = req ? parseRequirements(req, f.idx.text(req) ?? '').requirements : [];
        if (req && reqs.length && reqs.every((r) => /^==[^,*]+$/.test(r.specifier))) { evidence.push({ file: req, detail: 'every requirement pinned with ==' }); continue; }
      }
      if (eco === 'java' && manifestOf(f, /^pom\.xml$/) && !manifestOf(f, /^build\.gradle/)) { evidence.push({ file: manifestOf(f, /^pom\.xml$/)!, detail: 'Maven resolves the exact versions declared (no lock convention)' }); continue; }
      missing.push(`${eco}: no lock file (looked for ${LOCK_LOOKED_FOR})`);
    }
    return { earned: Math.round(p * (evidence.length / f.ecosystems.length)), evidence, ...(missing.length ? { missing: missing.join('; ') } : {}) };
  },
  pinned: (f, p) => {
    const judged: Array<{ file: string; line?: number; name: string; bounded: boolean; range: string }> = [];
    if (f.pkg) {
      for (const d of f.pkg.deps) judged.push({ file: f.pkg.file, ...(d.line ? { line: d.line } : {}), name: d.name, range: d.range, bounded: npmBounded(d.range) });
    }
    for (const req of f.manifests.filter((m) => /requirements[^/]*\.txt$/.test(m))) {
      for (const r of parseRequirements(req, f.idx.text(req) ?? '').requirements) judged.push({ file: req, line: r.line, name: r.name, range: r.specifier || '(any)', bounded: pyBounded(r.specifier) });
    }
    const pyproject = manifestOf(f, /^pyproject\.toml$/);
    if (pyproject) judged.push(...pyprojectDeps(pyproject, f.idx.text(pyproject) ?? ''));
    const pom = manifestOf(f, /^pom\.xml$/);
    if (pom) {
      // Versions of the dependencies (after <dependencies>, not the project's own); an absent one is managed by the parent.
      const from = f.idx.grep(pom, /<dependencies>/)?.line ?? Infinity;
      for (const l of f.idx.grepAll(pom, /<version>/, 500).filter((x) => (x.line ?? 0) > from)) {
        judged.push({ file: pom, ...(l.line ? { line: l.line } : {}), name: 'dependency', range: l.detail, bounded: !/<version>\s*([[(]|LATEST|RELEASE)/.test(l.detail) });
      }
    }
    const gradle = manifestOf(f, /^build\.gradle(\.kts)?$/);
    if (gradle) {
      for (const l of f.idx.grepAll(gradle, /^\s*(implementation|api|compileOnly|runtimeOnly|testImplementation)\b.*['"][\w.-]+:[\w.-]+:[^'"]+['"]/, 500)) {
        judged.push({ file: gradle, ...(l.line ? { line: l.line } : {}), name: 'dependency', range: l.detail, bounded: !/:[^'":]*(\+|latest\.(release|integration))['"]/.test(l.detail) });
      }
    }
    if (!judged.length) {
      return f.ecosystems.includes('go') ? ok(p, { file: manifestOf(f, /^go\.mod$/)!, detail: 'go.mod requires exact module versions' }) : notJudged('no dependency declared in package.json, requirements*.txt, pyproject.toml, pom.xml or build.gradle');
    }
    const open = judged.filter((j) => !j.bounded);
    const share = (judged.length - open.length) / judged.length;
    return {
      earned: Math.round(p * share),
      evidence: [{ file: judged[0]!.file, detail: `${judged.length - open.length} of ${judged.length} dependencies with a bounded version` }],
      ...(open.length ? { missing: `open version ranges: ${open.slice(0, 8).map((o) => `${o.name} "${o.range}" ${o.file}${o.line ? `:${o.line}` : ''}`).join(', ')}${open.length > 8 ? ` and ${open.length - 8} more` : ''}` } : {}),
    };
  },
  'lock-health': (f, p) => {
    const lock = f.idx.find(/(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml)$/)[0];
    if (!lock) return notJudged('duplicate majors and deprecated packages are read from an npm, yarn or pnpm lock file, and there is none');
    const h = lockHealth(lock, f.idx.text(lock) ?? '');
    if (!h) return notJudged(`${lock} holds no package map to read (package-lock v1 or unreadable)`);
    const problems = h.duplicates.length + h.deprecated.length;
    // A few duplicates are normal in a large tree; many mean dependents were never aligned.
    const earned = problems === 0 ? p : problems <= 5 ? Math.round(p / 2) : 0;
    return {
      earned, evidence: [{ file: lock, detail: `${h.packages} package(s) locked, ${h.duplicates.length} with several majors, ${h.deprecated.length} deprecated` }],
      ...(problems ? { missing: [...h.duplicates.slice(0, 6).map((d) => `${d.name} at majors ${d.majors.join(', ')}`), ...h.deprecated.slice(0, 6).map((d) => `${d.name}@${d.version} deprecated (${lock}:${d.line})`)].join('; ') + (problems > 12 ? ` (${problems} in all)` : '') } : {}),
    };
  },
  'git-tags': (f, p) => {
    if (!f.git.repository) return notJudged(f.git.note ?? 'the workspace is not a git repository');
    const semver = f.git.tags.filter((t) => SEMVER.test(t));
    if (semver.length) return ok(p, { file: '.git', detail: `${semver.length} version tag(s), newest ${newest(semver)}` });
    return no(f.git.tags.length ? `no semantic version tag among ${f.git.tags.length} tag(s) (${f.git.tags.slice(0, 3).join(', ')})` : 'no git tag');
  },
  version: (f, p) => {
    if (f.version) return SEMVER.test(f.version.value) ? ok(p, f.version) : { earned: Math.round(p / 2), evidence: [f.version], missing: `version "${f.version.value}" is not semantic (x.y.z)` };
    if (f.ecosystems.length === 1 && f.ecosystems[0] === 'go') return notJudged('Go modules carry their version in tags, not in go.mod');
    return f.ecosystems.length ? no('no version in the manifest (package.json "version", [project] version, setup.py version=, pom.xml <version>)') : notJudged('no manifest');
  },
  'release-workflow': (f, p) => {
    const file = firstOf(f.idx, /^(\.github\/workflows\/(release|publish|deploy-release)[^/]*\.ya?ml|\.goreleaser\.ya?ml|\.releaserc(\.(json|js|ya?ml))?|release\.config\.[cm]?js|release-please-config\.json|\.changeset\/config\.json)$/);
    const hit = file ?? ciLine(f, /semantic-release|goreleaser|changesets\/action|release-please|npm publish|twine upload|gh-action-pypi-publish|gh release create|softprops\/action-gh-release|mvn\b.*\bdeploy\b|gradlew?\b.*\bpublish\b|poetry publish|uv publish/);
    return hit ? ok(p, hit) : no('no release automation: looked for .github/workflows/release*.yml, .goreleaser.yml, .releaserc, release-please or changesets config, a publish step in CI');
  },
  'changelog-current': (f, p) => {
    const c = changelogOf(f);
    const current = f.version?.value ?? newest(f.git.tags.filter((t) => SEMVER.test(t)));
    if (!current) return notJudged('no current version (manifest or tag) to look for');
    if (!c) return no(`no changelog to name version ${current}`);
    const bare = current.replace(/^v/, '');
    const hit = f.idx.grep(c, new RegExp(`^#+.*\\bv?${bare.replace(/\./g, '\\.')}\\b`));
    return hit ? ok(p, hit) : no(`${c} has no heading for the current version ${current}`);
  },
};

const LOCKS_OF: Record<Ecosystem, RegExp> = {
  js: /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml)$/,
  python: /(^|\/)(poetry\.lock|Pipfile\.lock|uv\.lock|pdm\.lock)$/,
  go: /(^|\/)go\.sum$/,
  java: /(^|\/)gradle\.lockfile$/,
};

function readmeOf(f: Facts): string | undefined {
  return f.idx.files.find((x) => /^readme(\.(md|markdown|rst|txt|adoc))?$/i.test(x));
}
function changelogOf(f: Facts): string | undefined {
  return f.idx.files.find((x) => /^(changelog|changes|history|news)(\.(md|markdown|rst|txt|adoc))?$/i.test(x));
}
function readmeSection(f: Facts, p: number, heading: RegExp, what: string): Judged {
  const r = readmeOf(f);
  if (!r) return no(`no README to hold a ${what}`);
  const hit = f.idx.grep(r, heading);
  return hit ? ok(p, hit) : no(`${r} has no ${what}`);
}

/** npm: `*`, `latest`, `x`, an empty range or an open `>=` are unbounded; git and URL sources without a commit too. */
export function npmBounded(range: string): boolean {
  const r = range.trim();
  if (r === '' || r === '*' || r === 'latest' || /^x(\.x)*$/i.test(r)) return false;
  if (/^(git|git\+\w+|https?):|^github:|^[\w-]+\/[\w.-]+$/.test(r)) return /#[0-9a-f]{7,40}$/.test(r);
  if (/^(file|link|workspace|npm):/.test(r)) return true;
  return r.split('||').every((part) => !/>=?/.test(part) || /</.test(part));
}

/**
 * pyproject.toml's declared dependencies: PEP 621 `[project] dependencies = ["name>=1", ...]` and Poetry's
 * `[tool.poetry.dependencies] name = "^1.2"` (or `{version = "..."}`); read line by line (TOML arrays of
 * strings and flat tables), `python` itself skipped. Poetry's `^` and `~` are bounded, `*` is not.
 */
export function pyprojectDeps(file: string, text: string): Array<{ file: string; line: number; name: string; bounded: boolean; range: string }> {
  const out: Array<{ file: string; line: number; name: string; bounded: boolean; range: string }> = [];
  let section = '';
  let inArray = false;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.replace(/\s+#.*$/, '');
    const head = /^\s*\[([^\]]+)\]\s*$/.exec(l);
    if (head) { section = head[1]!.trim(); inArray = false; continue; }
    if (section === 'project') {
      let body = l;
      const start = /^\s*dependencies\s*=\s*\[/.exec(l);
      if (start) { inArray = true; body = l.slice(start[0].length); }
      if (inArray) {
        for (const m of body.matchAll(/["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^"';]*)[^"']*["']/g)) {
          const spec = m[3]!.replace(/\s+/g, '');
          out.push({ file, line: i + 1, name: m[1]!, range: spec || '(any)', bounded: pyBounded(spec) });
        }
        // The array ends at a `]` outside the quoted requirements (extras brackets are inside the quotes).
        if (body.replace(/"[^"]*"|'[^']*'/g, '').includes(']')) inArray = false;
      }
    } else if (section === 'tool.poetry.dependencies' || /^tool\.poetry\.group\.[^.]+\.dependencies$/.test(section)) {
      const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*(?:"([^"]*)"|\{[^}]*version\s*=\s*"([^"]*)")/.exec(l);
      if (m && m[1] !== 'python') {
        const range = (m[2] ?? m[3] ?? '').trim();
        out.push({ file, line: i + 1, name: m[1]!, range: range || '(any)', bounded: range !== '' && range !== '*' && (/^[\^~]|==|<|^\d/.test(range)) });
      }
    }
  }
  return out;
}

/** pip: a bare name or an open `>=` is unbounded; `==`, `~=` and `<` bounds are not. */
export function pyBounded(spec: string): boolean {
  if (!spec) return false;
  return /==|~=|</.test(spec);
}

type LockHealth = { packages: number; duplicates: Array<{ name: string; majors: number[] }>; deprecated: Array<{ name: string; version: string; line: number }> };

/**
 * Packages installed at several majors, and (package-lock only: the others do not record it) packages
 * npm marked deprecated, read from the lock file alone (no network): package-lock.json / npm-shrinkwrap
 * v2/v3, yarn.lock v1 and berry, pnpm-lock.yaml v5-v9. Undefined when the file has no package map.
 */
export function lockHealth(file: string, text: string): LockHealth | undefined {
  const base = file.split('/').pop()!;
  const versions: Array<{ name: string; version: string }> = [];
  const deprecated: LockHealth['deprecated'] = [];
  if (base === 'yarn.lock') {
    const lines = text.split(/\r?\n/);
    let names: string[] = [];
    for (const l of lines) {
      if (/^\S.*:$/.test(l) && !l.startsWith('#') && !l.startsWith('__metadata')) {
        // `"@scope/a@^1", a@^2:` or berry `"a@npm:^1":` -> the package names of the entry
        names = [...new Set(l.slice(0, -1).split(',').map((x) => x.trim().replace(/^"|"$/g, '')).map((spec) => spec.slice(0, spec.indexOf('@', 1))).filter(Boolean))];
        continue;
      }
      const v = /^\s+version:?\s+"?([^"\s]+)"?\s*$/.exec(l);
      if (v && names.length) { for (const n of names) versions.push({ name: n, version: v[1]! }); names = []; }
    }
  } else if (base === 'pnpm-lock.yaml') {
    let inPackages = false;
    for (const l of text.split(/\r?\n/)) {
      if (/^\S/.test(l)) { inPackages = /^packages:\s*$/.test(l); continue; }
      if (!inPackages) continue;
      // v5 `  /a/1.2.3:`, v6 `  /a@1.2.3:`, v9 `  a@1.2.3:` (quoted when scoped), peer suffixes in parentheses
      const m = /^ {2}'?\/?((?:@[^/@]+\/)?[^/@(]+)[@/](\d+\.\d+\.\d+[^(:']*)/.exec(l);
      if (m) versions.push({ name: m[1]!, version: m[2]! });
    }
  } else {
    let json: unknown;
    try { json = JSON.parse(text); } catch { return undefined; }
    const packages = (json as { packages?: Record<string, { version?: string; deprecated?: string }> } | null)?.packages;
    if (!packages || typeof packages !== 'object') return undefined;
    const lines = text.split(/\r?\n/);
    for (const [key, v] of Object.entries(packages)) {
      const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key);
      if (!m || !v || typeof v.version !== 'string') continue;
      versions.push({ name: m[1]!, version: v.version });
      if (typeof v.deprecated === 'string') {
        const at = lines.findIndex((l) => l.includes(`${JSON.stringify(key)}:`));
        deprecated.push({ name: m[1]!, version: v.version, line: at + 1 || 1 });
      }
    }
  }
  if (!versions.length) return undefined;
  const majors = new Map<string, Set<number>>();
  for (const { name, version } of versions) {
    const major = Number(/^(\d+)\./.exec(version)?.[1]);
    if (!Number.isFinite(major)) continue;
    const set = majors.get(name) ?? new Set<number>();
    set.add(major);
    majors.set(name, set);
  }
  const duplicates = [...majors].filter(([, set]) => set.size > 1).map(([name, set]) => ({ name, majors: [...set].sort((a, b) => a - b) })).sort((a, b) => a.name.localeCompare(b.name));
  return { packages: versions.length, duplicates, deprecated };
}

function newest(tags: string[]): string | undefined {
  const parse = (t: string) => SEMVER.exec(t)!.slice(1, 4).map(Number);
  return [...tags].sort((a, b) => { const x = parse(a); const y = parse(b); return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!; }).pop();
}

/** The manifest's version, with its file and line. */
function versionOf(idx: RepoIndex, pkg: PackageJson | undefined, manifests: string[]): (Located & { value: string }) | undefined {
  if (pkg) {
    const l = idx.grep(pkg.file, /^\s*"version"\s*:\s*"[^"]*"/);
    const v = l && /"version"\s*:\s*"([^"]*)"/.exec(l.detail)?.[1];
    if (l && v !== undefined) return { ...l, value: v };
  }
  const tries: Array<[RegExp, RegExp]> = [
    [/^pyproject\.toml$/, /^\s*version\s*=\s*["']([^"']+)["']/], [/^setup\.py$/, /\bversion\s*=\s*["']([^"']+)["']/],
    [/^setup\.cfg$/, /^\s*version\s*=\s*(\S+)/], [/^build\.gradle(\.kts)?$/, /^\s*version\s*=\s*["']([^"']+)["']/],
  ];
  for (const [file, re] of tries) {
    const m = manifests.find((x) => file.test(x.split('/').pop()!));
    const l = m ? idx.grep(m, re) : undefined;
    const v = l && re.exec(l.detail)?.[1];
    if (l && v) return { ...l, value: v };
  }
  const pom = manifests.find((x) => x.endsWith('pom.xml'));
  if (pom) {
    // The project's own <version> comes after </parent> (if any) and before <dependencies>.
    const text = idx.text(pom) ?? '';
    const start = Math.max(0, text.indexOf('</parent>'));
    const end = text.indexOf('<dependencies>') === -1 ? text.length : text.indexOf('<dependencies>');
    const m = /<version>\s*([^<\s]+)\s*<\/version>/.exec(text.slice(start, end));
    if (m) { const line = text.slice(0, start + m.index).split('\n').length; return { file: pom, line, detail: m[0], value: m[1]! }; }
  }
  return undefined;
}

/** Tags of the repository holding the workspace (for-each-ref: `tag` is not among the helper's commands). */
export async function gitTags(root: string, signal?: AbortSignal): Promise<{ repository: boolean; tags: string[]; note?: string }> {
  try {
    const inside = await runGit(root, ['rev-parse', '--is-inside-work-tree'], { ...(signal ? { signal } : {}) });
    if (inside.code !== 0 || inside.stdout.trim() !== 'true') return { repository: false, tags: [], note: 'the workspace is not a git repository' };
    const r = await runGit(root, ['for-each-ref', '--format=%(refname:short)', 'refs/tags'], { ...(signal ? { signal } : {}) });
    return { repository: true, tags: r.code === 0 ? r.stdout.split('\n').map((t) => t.trim()).filter(Boolean) : [] };
  } catch (e) {
    if (e instanceof UnsafeRepositoryError) return { repository: false, tags: [], note: `git refused on this repository: ${e.message}` };
    return { repository: false, tags: [], note: `git could not be run (${e instanceof Error ? e.message : String(e)})` };
  }
}

/** Thrown for a manifest that cannot be read (its file and line): the step is needs_input. */
export { ManifestError };

/** The assessment of the workspace indexed by `idx`; `git` from gitTags. */
export function assess(idx: RepoIndex, git: { repository: boolean; tags: string[]; note?: string }): Assessment {
  const { ecosystems, manifests } = detectEcosystems(idx);
  const pkgFile = manifests.find((m) => m.endsWith('package.json'));
  const pkg = pkgFile ? parsePackageJson(pkgFile, idx.text(pkgFile) ?? '{}') : undefined;
  const tests = idx.files.filter((f) => TEST_FILE.test(f) && !/(^|\/)(fixtures?|testdata)\//.test(f));
  const testSet = new Set(tests);
  const facts: Facts = {
    idx, ecosystems, manifests, ...(pkg ? { pkg } : {}), ci: idx.find(CI_FILE), tests,
    sources: idx.files.filter((f) => SOURCE_FILE.test(f) && !testSet.has(f) && !/(^|\/)(fixtures?|testdata|examples?)\/|\.config\.[cm]?[jt]s$|\.d\.ts$/.test(f)).length,
    git,
  };
  const version = versionOf(idx, pkg, manifests);
  if (version) facts.version = version;
  const criteria: CriterionResult[] = CRITERIA.map((c) => {
    const checks: CheckResult[] = c.checks.map((d) => {
      const j = CHECKS[d.id]!(facts, d.points);
      return { id: d.id, title: d.title, points: d.points, earned: j.earned, evidence: j.evidence ?? [], ...(j.missing ? { missing: j.missing } : {}) };
    });
    const judged = checks.filter((k) => k.earned !== null);
    const available = judged.reduce((n, k) => n + k.points, 0);
    const earned = judged.reduce((n, k) => n + (k.earned ?? 0), 0);
    return {
      id: c.id, title: c.title, weight: c.weight,
      score: available ? Math.round((earned / available) * 100) : null,
      checks, evidence: checks.flatMap((k) => k.evidence), missing: checks.filter((k) => k.missing).map((k) => k.missing!),
    };
  });
  const scored = criteria.filter((c) => c.score !== null);
  const weight = scored.reduce((n, c) => n + c.weight, 0);
  const score = weight ? Math.round(scored.reduce((n, c) => n + c.score! * c.weight, 0) / weight) : 0;
  const lvl = levelOf(score);
  return { score, level: lvl.level, levelName: lvl.name, meaning: lvl.meaning, ecosystems, manifests, git, criteria, examined: { files: idx.files.length } };
}
