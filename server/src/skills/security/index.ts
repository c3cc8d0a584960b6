export * from './allowlist';
export * from './entropy';
export * from './rules';
export * from './scanner';
export * from './skill';
