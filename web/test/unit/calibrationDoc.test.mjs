// docs/design.md's calibration table (R9) against the command that produces it, `npm run calibration:r9`: its figures
// at 30 and 100 runs are what the native command prints today for those sizes (every size draws from a seed
// of its own, so two sizes reproduce the table's rows exactly, in a few seconds).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../stack/paths.mjs';

const command = path.join(repoRoot, 'build/native/h3probe_calibration');
const cells = (line) => line.split('|').slice(1, -1).map((c) => c.trim());

test('the calibration table in design.md is what npm run calibration:r9 prints', () => {
  assert.ok(fs.existsSync(command), `${command} is missing: npm run build:native`);
  const printed = execFileSync(command, ['--sizes', '30,100'], { encoding: 'utf8' }).trim().split('\n').slice(2).map(cells);
  const models = new Set(printed.map((c) => c[0]));
  assert.equal(printed.length, models.size * 2 * 5, 'every model × two sizes × five percentiles');
  assert.ok(models.size >= 7, `the plain and the field-like models: ${[...models]}`);
  const doc = fs.readFileSync(path.join(repoRoot, 'docs/design.md'), 'utf8');
  const rows = new Map(doc.split('\n').map(cells).filter((c) => models.has(c[0]) && /^\d+$/.test(c[1]) && /^p\d+$/.test(c[2]))
    .map((c) => [c.slice(0, 3).join(' '), c]));
  for (const [model, runs, p, msCov, msSe, pctCov, pctSe, armCov, armSe, none] of printed) {
    const row = rows.get(`${model} ${runs} ${p}`);
    assert.ok(row, `the doc has ${model} ${runs} ${p}`);
    assert.equal(row[3], `${msCov} / ${msSe}`, `${model} ${runs} ${p}: Δ ms`);
    assert.equal(row[4], `${pctCov} / ${pctSe}`, `${model} ${runs} ${p}: Δ %`);
    assert.equal(row[5], `${armCov} / ${armSe}`, `${model} ${runs} ${p}: the arm`);
    assert.equal(row[6], none, `${model} ${runs} ${p}: no interval`);
  }
});
