// The user docs (README.md and docs/*.md, which the package ships) state behaviour, configuration and budgets; dated
// runs, load averages, commit hashes and "on this machine" belong to the engineering record (docs/record/, not shipped).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../stack/paths.mjs';

// What marks a measured run rather than a statement of behaviour. A bare "UTC" (a UTC day, a UTC date-time) is a
// definition and passes; an example date (`--since 2024-05-01`) passes; the project's own run dates do not.
const RUN_MARKS = {
  'a clock time': /\b\d{1,2}:\d{2}\s?(–\s?\d{1,2}:\d{2}\s?)?UTC\b|\b\d{2}:\d{2}–\d{2}:\d{2}\b/,
  'a load average': /\bload (average )?(of )?\d/,
  'a commit hash': /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}\b/,
  'a run date': /\b2026-\d{2}-\d{2}\b|\b\d{1,2} (November|December)( 2026)?\b|\b(November|December) \d{1,2}\b/,
  'this machine': /\bthis machine\b/,
};

const read = (rel) => fs.readFileSync(path.join(repoRoot, rel), 'utf8');
const userDocs = ['README.md', ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

function marks(rel) {
  const found = [];
  read(rel).split('\n').forEach((line, i) => {
    for (const [what, re] of Object.entries(RUN_MARKS)) if (re.test(line)) found.push(`${rel}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
  });
  return found;
}

test('no user doc carries a dated run, a load average, a commit hash or "this machine"', () => {
  assert.ok(userDocs.length >= 10, `the user docs: ${userDocs.join(', ')}`);
  assert.deepEqual(userDocs.flatMap(marks), []);
});

test('each mark is one the engineering record does carry (the patterns find what they are for)', () => {
  const record = fs.readdirSync(path.join(repoRoot, 'docs/record')).filter((f) => f.endsWith('.md')).map((f) => `docs/record/${f}`);
  const text = record.map(read).join('\n');
  for (const [what, re] of Object.entries(RUN_MARKS)) assert.ok(re.test(text), `no ${what} in docs/record/: the pattern finds nothing`);
});

test("architecture.md's layout names every module of wasm/core, and no other", () => {
  const block = /\nwasm\/core\/ {2,}([^\n]*(?:\n {20}[^\n]*)*)/.exec(read('docs/architecture.md'));
  assert.ok(block, 'docs/architecture.md: no wasm/core/ entry in the layout');
  const listed = block[1].replace(/\([^)]*\)/g, '').split(/,|\band\b|:/).map((t) => t.trim())
    .filter((t) => /^[a-z0-9_]+(\.hpp)?$/.test(t)).map((t) => t.replace(/\.hpp$/, ''));
  const files = [...new Set(fs.readdirSync(path.join(repoRoot, 'wasm/core')).map((f) => f.replace(/\.(c|h)pp$/, '')))];
  assert.deepEqual([...new Set(listed)].sort(), files.sort());
});

test("architecture.md's layout names every folder of the top level and of web/, and each folder it names exists", () => {
  const layout = /## Layout of the repository\n\n```\n([\s\S]*?)\n```/.exec(read('docs/architecture.md'));
  assert.ok(layout, 'docs/architecture.md: no layout block');
  // Each entry starts at column 0: one or more "folder/" names (comma-separated), then its description.
  const named = layout[1].split('\n').filter((l) => /^\S/.test(l))
    .flatMap((l) => l.split(/ {2,}/)[0].split(/,\s*/)).filter((n) => n.endsWith('/')).map((n) => n.replace(/\/$/, ''));
  assert.ok(named.length >= 15, `the layout's folders: ${named.join(', ')}`);
  const tracked = execFileSync('git', ['ls-files'], { cwd: repoRoot, encoding: 'utf8' }).split('\n').filter(Boolean);
  const folders = new Set(tracked.filter((f) => f.includes('/') && !f.startsWith('.')).map((f) => f.split('/')[0]));
  for (const f of tracked.filter((t) => t.startsWith('web/') && t.split('/').length > 2)) folders.add(f.split('/').slice(0, 2).join('/'));
  folders.add('web/dist'); // built, not tracked; the layout says so
  const isNamed = (f) => named.some((n) => n === f || n.startsWith(`${f}/`));
  assert.deepEqual([...folders].filter((f) => !isNamed(f)).sort(), [], 'folders the layout does not name');
  assert.deepEqual(named.filter((n) => !folders.has(n) && !fs.existsSync(path.join(repoRoot, n))).sort(), [], 'named folders that do not exist');
});
