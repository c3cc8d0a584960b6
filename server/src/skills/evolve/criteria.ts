/**
 * evolve-ai's maturity model as data: seven criteria (weights add up to 100), each made of checks
 * worth points inside their criterion. Every check also carries what the plan needs to order it:
 * `value` (1-5: how much it lowers the risk of shipping a defect or a vulnerability) and `effort`
 * (1-5: 1 is a file to add, 5 is sustained work), and the concrete next steps per ecosystem, naming
 * the files to add. The judging itself (what counts as evidence) is in assess.ts.
 */

export const ECOSYSTEMS = ['js', 'python', 'go', 'java'] as const;
export type Ecosystem = (typeof ECOSYSTEMS)[number];

export interface CheckDef {
  id: string;
  title: string;
  points: number;
  value: number;
  effort: number;
  /** Next steps for the ecosystems found (the first ecosystem's steps when several apply). */
  steps: (eco: Ecosystem | undefined) => string[];
}

export interface CriterionDef {
  id: string;
  title: string;
  weight: number;
  checks: readonly CheckDef[];
}

const by = (m: Partial<Record<Ecosystem | 'any', string[]>>) => (eco: Ecosystem | undefined): string[] => (eco && m[eco]) || m.any || [];

export const CRITERIA: readonly CriterionDef[] = [
  {
    id: 'tests', title: 'Tests and coverage', weight: 20,
    checks: [
      { id: 'test-files', title: 'test files', points: 40, value: 5, effort: 4, steps: by({
        js: ['add tests beside the code (src/<module>.test.ts) or under test/ with mocha, jest or vitest', 'start with the modules changed most often (git log --format= --name-only | sort | uniq -c)'],
        python: ['add tests/test_<module>.py with pytest', 'start with the modules changed most often'],
        go: ['add <file>_test.go beside each package with table-driven tests'],
        java: ['add src/test/java/<package>/<Class>Test.java with JUnit 5'],
        any: ['add a tests/ folder with tests for the most-changed modules'] }) },
      { id: 'test-script', title: 'a test command', points: 30, value: 3, effort: 1, steps: by({
        js: ['add "test": "mocha" (or jest / vitest) to the scripts of package.json'],
        python: ['add [tool.pytest.ini_options] to pyproject.toml (or a pytest.ini)'],
        go: ['add a Makefile target test: go test ./...'],
        java: ['declare maven-surefire-plugin in pom.xml (or the test task in build.gradle)'],
        any: ['add a Makefile target test'] }) },
      { id: 'coverage', title: 'coverage measured', points: 30, value: 3, effort: 2, steps: by({
        js: ['add .c8rc.json (or .nycrc) with check-coverage and a lines threshold', 'add "coverage": "c8 npm test" to package.json'],
        python: ['add pytest-cov and [tool.coverage.report] fail_under = 80 to pyproject.toml (or .coveragerc)'],
        go: ['run go test -coverprofile=coverage.out ./... in CI'],
        java: ['add jacoco-maven-plugin to pom.xml (or the jacoco plugin to build.gradle) with a minimum'],
        any: ['measure coverage in CI and keep the report'] }) },
    ],
  },
  {
    id: 'ci', title: 'Continuous integration', weight: 15,
    checks: [
      { id: 'ci-config', title: 'a CI pipeline', points: 50, value: 5, effort: 2, steps: by({ any: ['add .github/workflows/ci.yml running on push and pull_request (or .gitlab-ci.yml)'] }) },
      { id: 'ci-tests', title: 'CI runs the tests', points: 25, value: 5, effort: 1, steps: by({
        js: ['add a step `npm ci && npm test` to .github/workflows/ci.yml'], python: ['add a step `pip install -e .[test] && pytest` to .github/workflows/ci.yml'],
        go: ['add a step `go test ./...` to .github/workflows/ci.yml'], java: ['add a step `mvn -B verify` (or ./gradlew check) to .github/workflows/ci.yml'],
        any: ['add the test command to the CI configuration'] }) },
      { id: 'ci-lint', title: 'CI runs a linter or type check', points: 25, value: 3, effort: 1, steps: by({
        js: ['add a step `npm run lint` (and `tsc --noEmit`) to .github/workflows/ci.yml'], python: ['add a step `ruff check .` to .github/workflows/ci.yml'],
        go: ['add golangci/golangci-lint-action to .github/workflows/ci.yml'], java: ['run checkstyle or spotless:check in .github/workflows/ci.yml'],
        any: ['add the lint command to the CI configuration'] }) },
    ],
  },
  {
    id: 'lint', title: 'Lint and static checks', weight: 10,
    checks: [
      { id: 'lint-config', title: 'a linter configuration', points: 60, value: 3, effort: 2, steps: by({
        js: ['add eslint.config.mjs (typescript-eslint for TypeScript)'], python: ['add [tool.ruff] to pyproject.toml (or ruff.toml)'],
        go: ['add .golangci.yml'], java: ['add checkstyle.xml and the maven-checkstyle-plugin (or spotless)'], any: ['add a linter configuration'] }) },
      { id: 'lint-script', title: 'a lint command', points: 40, value: 2, effort: 1, steps: by({
        js: ['add "lint": "eslint ." to the scripts of package.json'], python: ['add a Makefile target lint: ruff check .'],
        go: ['add a Makefile target lint: golangci-lint run'], java: ['bind checkstyle:check to the verify phase in pom.xml'], any: ['add a lint command'] }) },
    ],
  },
  {
    id: 'docs', title: 'Documentation', weight: 10,
    checks: [
      { id: 'readme', title: 'a README', points: 30, value: 4, effort: 1, steps: by({ any: ['add README.md: what the project does, how to install, how to use it'] }) },
      { id: 'readme-install', title: 'README says how to install', points: 15, value: 3, effort: 1, steps: by({ any: ['add an "## Installation" section to README.md with the commands'] }) },
      { id: 'readme-usage', title: 'README says how to use it', points: 15, value: 3, effort: 1, steps: by({ any: ['add a "## Usage" section to README.md with an example'] }) },
      { id: 'docs-folder', title: 'a docs folder', points: 20, value: 2, effort: 3, steps: by({ any: ['add docs/ (architecture.md, decisions.md) for what does not fit the README'] }) },
      { id: 'changelog', title: 'a changelog', points: 20, value: 2, effort: 1, steps: by({ any: ['add CHANGELOG.md (Keep a Changelog format) with an Unreleased section'] }) },
    ],
  },
  {
    id: 'security', title: 'Security policy', weight: 15,
    checks: [
      { id: 'security-policy', title: 'a security policy', points: 50, value: 4, effort: 1, steps: by({ any: ['add SECURITY.md: supported versions and how to report a vulnerability privately'] }) },
      { id: 'dependency-updates', title: 'automated dependency updates', points: 30, value: 4, effort: 1, steps: by({
        js: ['add .github/dependabot.yml with package-ecosystem: npm (or renovate.json)'], python: ['add .github/dependabot.yml with package-ecosystem: pip'],
        go: ['add .github/dependabot.yml with package-ecosystem: gomod'], java: ['add .github/dependabot.yml with package-ecosystem: maven (or gradle)'],
        any: ['add .github/dependabot.yml (or renovate.json)'] }) },
      { id: 'security-scan-ci', title: 'a security scanner in CI', points: 20, value: 4, effort: 2, steps: by({
        js: ['add github/codeql-action and `npm audit --audit-level=high` to .github/workflows/ci.yml'], python: ['add `pip-audit` and github/codeql-action to .github/workflows/ci.yml'],
        go: ['add `govulncheck ./...` to .github/workflows/ci.yml'], java: ['add github/codeql-action (or OWASP dependency-check) to .github/workflows/ci.yml'],
        any: ['add a security scanner to CI'] }) },
    ],
  },
  {
    id: 'dependencies', title: 'Dependency hygiene', weight: 15,
    checks: [
      { id: 'lockfile', title: 'a lock file', points: 40, value: 5, effort: 1, steps: by({
        js: ['run npm install and commit package-lock.json'], python: ['lock with poetry lock / uv lock (or pip-compile to requirements.txt) and commit the lock'],
        go: ['run go mod tidy and commit go.sum'], java: ['enable dependencyLocking in build.gradle and commit gradle.lockfile'], any: ['commit a lock file'] }) },
      { id: 'pinned', title: 'bounded version ranges', points: 30, value: 3, effort: 2, steps: by({
        js: ['replace *, latest and open >= ranges in package.json with ^ or exact versions'], python: ['pin requirements with == (or ~=) instead of bare names and open >='],
        java: ['replace version ranges, LATEST and RELEASE in pom.xml with exact versions'], any: ['bound every dependency version'] }) },
      { id: 'lock-health', title: 'no duplicate majors or deprecated packages in the lock', points: 30, value: 2, effort: 3, steps: by({
        js: ['run npm ls <package> for each duplicate, raise the dependents to one major, then npm dedupe', 'replace the deprecated packages named in package-lock.json'],
        any: ['align the dependents on one major per package'] }) },
    ],
  },
  {
    id: 'release', title: 'Release process', weight: 15,
    checks: [
      { id: 'git-tags', title: 'version tags', points: 30, value: 2, effort: 1, steps: by({ any: ['tag each release: git tag -a v1.2.3 -m "v1.2.3" && git push --tags'] }) },
      { id: 'version', title: 'a semantic version in the manifest', points: 20, value: 2, effort: 1, steps: by({
        js: ['set "version": "x.y.z" in package.json'], python: ['set version = "x.y.z" under [project] in pyproject.toml'],
        java: ['set <version>x.y.z</version> in pom.xml (or version = "x.y.z" in build.gradle)'], any: ['state the version in the manifest'] }) },
      { id: 'release-workflow', title: 'an automated release', points: 30, value: 3, effort: 3, steps: by({
        js: ['add .github/workflows/release.yml running on tags v* that publishes (npm publish) and creates the GitHub release'],
        python: ['add .github/workflows/release.yml running on tags v* with pypa/gh-action-pypi-publish'],
        go: ['add .goreleaser.yaml and .github/workflows/release.yml running goreleaser on tags v*'],
        java: ['add .github/workflows/release.yml running mvn deploy (or gradle publish) on tags v*'],
        any: ['add a release workflow triggered by version tags'] }) },
      { id: 'changelog-current', title: 'the changelog names the current version', points: 20, value: 2, effort: 1, steps: by({ any: ['add a "## [x.y.z] - date" entry for the current version to CHANGELOG.md'] }) },
    ],
  },
];

/** Maturity levels by score (0-100), lowest first: the level is the last whose floor the score reaches. */
export const LEVELS: ReadonlyArray<{ floor: number; name: string; meaning: string }> = [
  { floor: 0, name: 'initial', meaning: 'practices are ad hoc: little of the project is automated or written down' },
  { floor: 20, name: 'repeatable', meaning: 'some practices exist but depend on people remembering them' },
  { floor: 40, name: 'defined', meaning: 'the main practices are written down and partly automated' },
  { floor: 60, name: 'managed', meaning: 'tests, CI and dependency hygiene are automated and checked' },
  { floor: 80, name: 'optimizing', meaning: 'every criterion is automated; improvement is continuous' },
];

export function levelOf(score: number): { level: number; name: string; meaning: string } {
  let i = 0;
  for (let k = 0; k < LEVELS.length; k++) if (score >= LEVELS[k]!.floor) i = k;
  return { level: i + 1, name: LEVELS[i]!.name, meaning: LEVELS[i]!.meaning };
}

export const TOTAL_WEIGHT = CRITERIA.reduce((n, c) => n + c.weight, 0);
