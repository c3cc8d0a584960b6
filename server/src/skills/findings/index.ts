export * from './finding';
export * from './baseline';
export * from './sarif';
export * from './suppressions';
