export * from './allowlist';
export * from './entropy';
export * from './rules';
export * from './scanner';
export * from './skill';
export * from './iac';
export * from './dependencies';
export * from './semver';
