// h3probe trial's options (web/cli/trial.mjs): the --search grammar, the URLs of the page's config, and a clear error
// naming every problem; the run itself is tested end to end (web/test/e2e/trial.test.mjs, package.test.mjs).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { TrialError, parseSearch, trialOptions } from '../../cli/trial.mjs';
import { repoRoot } from '../../stack/paths.mjs';

const site = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-trial-options-'));
after(() => fs.rmSync(site, { recursive: true, force: true }));
const base = ['--site', site, '--h2', 'https://h2-test.example.com:8443', '--h3', 'https://h3-test.example.com', '--beacon', 'https://beacon.example.com/beacon'];

test('--search: click, submit with or without text, script, or none', () => {
  assert.deepEqual(parseSearch('click #go'), { verb: 'click', selector: '#go' });
  assert.deepEqual(parseSearch('submit input[name=q]'), { verb: 'submit', selector: 'input[name=q]', text: 'test' });
  assert.deepEqual(parseSearch('submit #q quarterly  report'), { verb: 'submit', selector: '#q', text: 'quarterly report' });
  assert.deepEqual(parseSearch('script search.mjs'), { verb: 'script', file: path.resolve('search.mjs') });
  assert.equal(parseSearch(''), null);
  for (const bad of ['tap #go', 'click', 'click #a #b', 'script', 'script a.mjs b.mjs']) {
    assert.throws(() => parseSearch(bad), (err) => err instanceof TrialError && err.message.includes(`not "${bad}"`), bad);
  }
});

test('the defaults: 10 loads of /, 30 s each, headless', () => {
  const o = trialOptions(base);
  assert.deepEqual({ site: o.site, page: o.page, loads: o.loads, timeoutMs: o.timeoutMs, open: o.open, search: o.search },
    { site, page: '/', loads: 10, timeoutMs: 30_000, open: false, search: null });
  assert.deepEqual([o.h2.host, o.h3.host, o.beacon.host], ['h2-test.example.com:8443', 'h3-test.example.com', 'beacon.example.com']);
});

test('every problem is named at once', () => {
  const argv = ['--site', path.join(site, 'missing'), '--h2', 'http://h2.example.com', '--h3', 'https://h3.example.com',
    '--beacon', 'https://h3.example.com/collect', '--page', 'index.html', '--loads', '0', '--timeout', 'soon'];
  assert.throws(() => trialOptions(argv), (err) => {
    const lines = err.message.split('\n');
    assert.ok(err instanceof TrialError);
    for (const flag of ['--h2', '--beacon must have a host name of its own', '--beacon: the collector answers at /beacon', '--site', '--page', '--loads', '--timeout']) {
      assert.ok(lines.some((l) => l.startsWith(flag)), `${flag}: ${err.message}`);
    }
    return true;
  });
  assert.throws(() => trialOptions([...base.slice(0, 4), '--h3', 'https://h2-test.example.com', ...base.slice(6)]), /--h2 and --h3 must be different host names/);
  assert.throws(() => trialOptions([...base.slice(0, 2), '--h2', 'https://127.0.0.1:8443', ...base.slice(4)]), /--h2 must be the https:\/\/ URL with a host name/);
});

// The packages a module needs before it runs: the bare specifiers of its static imports and of theirs, transitively.
function staticPackages(file, seen = new Set()) {
  if (seen.has(file)) return new Set();
  seen.add(file);
  const out = new Set();
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"()]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm)) {
    const spec = m[1] ?? m[2];
    if (spec.startsWith('.')) for (const p of staticPackages(path.resolve(path.dirname(file), spec), seen)) out.add(p);
    else if (!spec.startsWith('node:')) out.add(spec);
  }
  return out;
}

test('h3probe trial and doctor start without puppeteer-core: only a launch loads it (chromium.mjs loadDriver()), so --open needs none', () => {
  const withImport = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-scan-')), 'driver.mjs');
  fs.writeFileSync(withImport, "import puppeteer from 'puppeteer-core';\nexport const p = puppeteer;\n");
  assert.ok(staticPackages(withImport).has('puppeteer-core'), 'the scan sees a static import of the driver');
  for (const file of ['web/cli/trial.mjs', 'web/cli/doctor.mjs', 'web/cli/browsers.mjs', 'web/stack/stack.mjs']) {
    assert.ok(!staticPackages(path.join(repoRoot, file)).has('puppeteer-core'), `${file} imports puppeteer-core before it runs`);
  }
  // The one place that names the driver.
  assert.match(fs.readFileSync(path.join(repoRoot, 'web/cli/chromium.mjs'), 'utf8'), /import\('puppeteer-core'\)/);
});
