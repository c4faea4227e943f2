// The built module keeps what tells bundlers to leave its import()s of a URL to the browser (web/scripts/build_dist.mjs):
// without it webpack and Turbopack broke every page load (issue 50). Seconds, where package.test.mjs's pages take minutes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { distRoot } from '../../stack/paths.mjs';

// Each import() whose argument is not a string literal, with the comments between its parenthesis and the argument.
const dynamicImports = (code) => [...code.matchAll(/\bimport\(((?:\s*\/\*[^*]*\*\/)*)\s*([^'"\s)][^)]*)\)/g)]
  .map(([, comments, argument]) => ({ comments: comments.match(/\/\*[^*]*\*\//g) ?? [], argument }));

test('run.js\'s import of worker.js and the worker\'s of the glue tell webpack, Turbopack and Vite to leave them alone', () => {
  for (const file of ['run.js', 'worker.js']) {
    const found = dynamicImports(fs.readFileSync(path.join(distRoot, file), 'utf8'));
    assert.equal(found.length, 1, `${file}: one import() of a URL: ${JSON.stringify(found)}`);
    assert.deepEqual(found[0].comments.map((c) => c.trim()).sort(),
      ['/* @vite-ignore */', '/* turbopackIgnore: true */', '/* webpackIgnore: true */'], file);
  }
});

test('the gate keeps no comment, and imports run.js by a literal path that bundlers follow to a lazy chunk', () => {
  const gate = fs.readFileSync(path.join(distRoot, 'h3probe.js'), 'utf8');
  assert.deepEqual(dynamicImports(gate), []);
  assert.doesNotMatch(gate, /\/\*/);
  assert.match(gate, /\bimport\("\.\/run\.js"\)/);
});
