// `npm start` in two browsers: one page load each in Chromium and Firefox ESR through the real stack, and the report the
// command prints is split by browser (the collector names each run's browser from the beacon request's headers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engineMissing } from '../../cli/browsers.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const missing = engineMissing('firefox') ?? false;

test('npm start --browsers chromium,firefox prints a report split by browser', { skip: missing }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-start-'));
  try {
    const out = (name) => path.join(tmp, name);
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'web/scripts/start.mjs'), '--loads', '2', '--browsers', 'chromium,firefox',
      '--db', out('runs.sqlite'), '--html', out('report.html'), '--json', out('report.json')], { encoding: 'utf8', timeout: 240_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\[4\/4\] firefox run /m);
    assert.match(r.stdout, /^== browser chromium: 2 runs, 20 measured requests/m);
    assert.match(r.stdout, /^== browser firefox: 2 runs, 20 measured requests/m);
    assert.match(r.stdout, /^by browser /m);
    const json = JSON.parse(fs.readFileSync(out('report.json'), 'utf8'));
    assert.equal(json.by, 'browser');
    assert.deepEqual(json.groups.map((g) => g.name).sort(), ['chromium', 'firefox', 'overall']);
    // Both ends agreed on every request in both browsers: nothing excluded as a mismatch.
    assert.equal(json.groups[0].excluded.protocol_mismatch, 0);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
