// Where the stack finds the repository's folders and keeps its generated state (.h3probe/, gitignored).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const stateDir = path.join(repoRoot, '.h3probe');
export const pageRoot = path.join(repoRoot, 'web', 'page');
// The page module as the package ships it (npm run build:dist): the gate, the run, the glue and the .wasm.
export const distRoot = path.join(repoRoot, 'web', 'dist');
