// Where the stack finds the repository's folders and keeps its generated state (.h3probe/, gitignored).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const stateDir = path.join(repoRoot, '.h3probe');
export const pageRoot = path.join(repoRoot, 'web', 'page');
export const srcRoot = path.join(repoRoot, 'web', 'src');
export const buildRoot = path.join(repoRoot, 'build', 'wasm');
