/**
 * What a repository shows about how it is run: its file list (walked once, confined to the workspace)
 * and the lines of the few files a check reads. Shared by evolve-ai (maturity criteria) and govern-ai
 * compliance (control evidence), which both ask "is there a file like X, and which line says Y?" and
 * must answer with the file and line, or with what was looked for and where.
 *
 * Reads go through WorkspaceFiles (a symlink out of the workspace or a protected path is never read);
 * each file is read at most once per index and only up to a size bound (configuration and docs are
 * small; a huge file is not evidence of a practice).
 */
import { walkFiles, WorkspaceFiles } from '../workspace/files';
import { DEFAULT_SKIP_DIRS } from '../security/scanner';
import { redactSecretsIn } from '../findings/redact';

/** A located piece of evidence: the file, the line when one line says it, and what it says. */
export interface Located {
  file: string;
  line?: number;
  detail: string;
}

/** Files at most this large are read for evidence (larger ones are listed, not read). */
const MAX_EVIDENCE_BYTES = 1024 * 1024;
/** Bound of the walk: a monorepo's first files still give the repository-level evidence. */
const WALK_LIMIT = 50_000;
// Test fixtures hold planted facts (a committed key, TLS turned off, a CI file of a sample project): they
// are not evidence of how this repository is run, either way.
const SKIP = new Set([...DEFAULT_SKIP_DIRS, 'vendor', 'bower_components', '.tox', '.gradle', '.idea', '.mypy_cache', '.pytest_cache', 'fixtures', '__fixtures__', 'testdata']);

export class RepoIndex {
  readonly files: readonly string[];
  private readonly set: Set<string>;
  private readonly ws: WorkspaceFiles;
  private readonly texts = new Map<string, string | null>();
  /** Every file actually read (for the scope-boundary gate's evidence). */
  readonly read = new Set<string>();

  /**
   * `scope` (workspace-relative folders) narrows the files examined; repository-level files (top-level
   * files and everything under `.github/`, `.gitlab/`, `.circleci/`) always stay in view because that is
   * where a repository states its policies, whatever sub-folder is being judged.
   */
  constructor(readonly root: string, scope: readonly string[] = []) {
    this.ws = new WorkspaceFiles(root);
    const all = walkFiles(root, { skipDirs: SKIP, limit: WALK_LIMIT });
    const prefixes = scope.map((s) => s.replace(/\\/g, '/').replace(/^\.\/?/, '').replace(/\/+$/, '')).filter((s) => s && s !== '.');
    const inScope = (f: string) => !prefixes.length || !f.includes('/') || /^\.(github|gitlab|circleci)\//.test(f)
      || prefixes.some((p) => f === p || f.startsWith(`${p}/`));
    this.files = all.filter(inScope).sort();
    this.set = new Set(this.files);
  }

  has(rel: string): boolean {
    return this.set.has(rel);
  }

  /** Files whose workspace-relative path matches. */
  find(re: RegExp): string[] {
    return this.files.filter((f) => re.test(f));
  }

  /** The text of a listed file, or undefined (missing, refused, too large, binary). */
  text(rel: string): string | undefined {
    if (this.texts.has(rel)) return this.texts.get(rel) ?? undefined;
    let out: string | null = null;
    if (this.set.has(rel)) {
      const r = this.ws.readBytes(rel, MAX_EVIDENCE_BYTES);
      if (r.ok && !r.buf.subarray(0, 8000).includes(0)) {
        out = r.buf.toString('utf8');
        this.read.add(rel);
      }
    }
    this.texts.set(rel, out);
    return out ?? undefined;
  }

  /** The first line of `rel` that matches, with its number (1-based). */
  grep(rel: string, re: RegExp): Located | undefined {
    return this.grepAll(rel, re, 1)[0];
  }

  /** Every matching line of `rel` (at most `max`), the line trimmed to 160 characters. */
  grepAll(rel: string, re: RegExp, max = 20): Located[] {
    const text = this.text(rel);
    if (text === undefined) return [];
    const out: Located[] = [];
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length && out.length < max; i++) {
      const l = lines[i]!;
      // A line quoted as evidence leaves the step: a secret on it is redacted (the secrets-clean gate reads data too).
      if (re.test(l)) out.push({ file: rel, line: i + 1, detail: clip(redactSecretsIn(l.trim())) });
    }
    return out;
  }

  /** The first matching line across files (in path order). */
  grepFiles(files: readonly string[], re: RegExp): Located | undefined {
    for (const f of files) {
      const hit = this.grep(f, re);
      if (hit) return hit;
    }
    return undefined;
  }

  /** Workspace-relative paths of every file read so far (for Evidence.pathsRead). */
  pathsRead(): string[] {
    return [...this.read];
  }
}

export function clip(s: string, n = 160): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** Where CI is configured (one list for both skills). */
export const CI_FILE = /^(\.github\/workflows\/[^/]+\.ya?ml|\.gitlab-ci\.ya?ml|\.circleci\/config\.ya?ml|Jenkinsfile|azure-pipelines\.ya?ml|\.travis\.ya?ml|bitbucket-pipelines\.ya?ml|\.buildkite\/pipeline\.ya?ml|\.drone\.ya?ml)$/;
export const CI_LOOKED_FOR = '.github/workflows/*.yml, .gitlab-ci.yml, .circleci/config.yml, Jenkinsfile, azure-pipelines.yml, .travis.yml, bitbucket-pipelines.yml';

/** A CI line that runs tests, in any of the four ecosystems. */
export const CI_RUNS_TESTS = /\b(npm (run )?test|npm run test:|yarn (run )?test|pnpm (run )?test|npx (mocha|jest|vitest)|pytest|python -m (pytest|unittest)|tox\b|nox\b|go test|mvn\b.*\b(test|verify|package|install)\b|\.\/mvnw\b.*\b(test|verify)\b|gradlew?\b.*\b(test|check|build)\b|make test|cargo test)/i;
/** A CI line that runs a linter or a type check. */
export const CI_RUNS_LINT = /\b(npm run (lint|typecheck|check)|yarn (run )?lint|pnpm (run )?lint|eslint|biome (check|lint)|tsc\b|ruff|flake8|pylint|mypy|golangci-lint|go vet|staticcheck|checkstyle|spotless(Check)?|make lint)/i;
/** A CI line that runs a security scanner. */
export const CI_RUNS_SECURITY_SCAN = /\b(codeql|github\/codeql-action|snyk|trivy|grype|npm audit|yarn audit|pnpm audit|pip-audit|safety check|gosec|govulncheck|semgrep|dependency-check|osv-scanner|bandit|gitleaks|trufflehog|sonar|anchore|cadre (scan|security))/i;

/** Lock files by ecosystem. */
export const LOCK_FILE = /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Pipfile\.lock|uv\.lock|pdm\.lock|go\.sum|gradle\.lockfile|Cargo\.lock|composer\.lock|Gemfile\.lock)$/;
export const LOCK_LOOKED_FOR = 'package-lock.json, yarn.lock, pnpm-lock.yaml, poetry.lock, Pipfile.lock, uv.lock, go.sum, gradle.lockfile';

/** Dependency update automation. */
export const DEP_UPDATE_FILE = /^(\.github\/dependabot\.ya?ml|renovate\.json5?|\.renovaterc(\.json5?)?|\.github\/renovate\.json5?|\.gitlab\/renovate\.json)$/;
export const DEP_UPDATE_LOOKED_FOR = '.github/dependabot.yml, renovate.json, .renovaterc, .github/renovate.json';

/** A security policy (how to report a vulnerability). */
export const SECURITY_POLICY_FILE = /^(\.github\/|docs\/)?SECURITY\.(md|rst|txt|adoc)$/i;
export const SECURITY_POLICY_LOOKED_FOR = 'SECURITY.md at the root, in .github/ or docs/';

/** Code owners: who must review a change. */
export const CODEOWNERS_FILE = /^(\.github\/|docs\/|\.gitlab\/)?CODEOWNERS$/;
export const CODEOWNERS_LOOKED_FOR = 'CODEOWNERS at the root, in .github/, docs/ or .gitlab/';
