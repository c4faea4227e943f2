// Another version of this repository beside the working one, for a benchmark that measures both in the same run:
// the commit's files (git archive) under .h3probe/beside/COMMIT, its Node core built there with the same Emscripten,
// and this tree's node_modules. Made once per commit and kept.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, stateDir } from '../stack/paths.mjs';

/**
 * The commit's tree with its Node core built (web/dist/node/), made when missing. log(text): progress. Returns
 * { dir, commit (the full hash) }.
 */
export function besideTree(commitish, { log = () => {} } = {}) {
  const commit = execFileSync('git', ['-C', repoRoot, 'rev-parse', '--verify', `${commitish}^{commit}`], { encoding: 'utf8' }).trim();
  const dir = path.join(stateDir, 'beside', commit.slice(0, 12));
  const built = path.join(dir, 'web', 'dist', 'node', 'h3probe_node.wasm');
  if (fs.existsSync(built)) return { dir, commit };
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  log(`beside: ${commit.slice(0, 12)} into ${dir}, building its Node core (a few minutes)`);
  const archive = execFileSync('git', ['-C', repoRoot, 'archive', commit], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  const wasm = path.join(dir, 'build', 'wasm');
  execFileSync('emcmake', ['cmake', '-S', dir, '-B', wasm, '-DCMAKE_BUILD_TYPE=Release'], { stdio: 'ignore' });
  execFileSync('cmake', ['--build', wasm, '--target', 'h3probe_node', '-j2'], { stdio: 'ignore' });
  fs.mkdirSync(path.dirname(built), { recursive: true });
  for (const file of ['h3probe_node.cjs', 'h3probe_node.wasm']) fs.copyFileSync(path.join(wasm, file), path.join(dir, 'web', 'dist', 'node', file));
  return { dir, commit };
}
