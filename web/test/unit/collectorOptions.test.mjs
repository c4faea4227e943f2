// The collector's options without a collector: flags, --config, errors, --help (the CLI exits before it loads the
// core), the docs' table and metric names, and web/deploy's example config. Pure logic: neither the WebAssembly build
// nor a server. (The collector as a service: collectorService.test.mjs.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { COLLECTOR_OPTIONS, OptionsError, collectorHelp, optionsMarkdownTable, parseCollectorArgs } from '../../server/collectorOptions.mjs';
import { METRICS } from '../../server/metrics.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-options-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('collector options', () => {
  test('defaults, a --config file, and flags over it', () => {
    const file = path.join(tmp, 'c.json');
    fs.writeFileSync(file, JSON.stringify({ port: 9000, rateLimit: 30, allowedOrigins: ['https://a.example'], drainTimeout: 30 }));
    const { options } = parseCollectorArgs(['--config', file, '--port=9001', '--allowed-origins', 'https://b.example,https://c.example']);
    assert.equal(options.port, 9001);
    assert.equal(options.rateLimit, 30);
    assert.deepEqual(options.allowedOrigins, ['https://b.example', 'https://c.example']);
    assert.equal(options.drainTimeout, 30);
    assert.equal(options.path, '/beacon');
    assert.equal(options.headersTimeout, 10);
    assert.deepEqual(parseCollectorArgs(['-h']), { help: true });
  });

  test('unknown keys and bad values are errors that name them', () => {
    const bad = (argv, re, files = {}) => assert.throws(() => parseCollectorArgs(argv, { readFile: (f) => {
      if (!(f in files)) throw new Error('ENOENT');
      return files[f];
    } }), (err) => err instanceof OptionsError && re.test(err.message));
    bad(['--nope', '1'], /unknown option --nope/);
    // The cluster mode is gone: its option is refused, not ignored.
    bad(['--workers', '2'], /unknown option --workers/);
    bad(['--config', 'c.json'], /unknown option "workers"/, { 'c.json': '{"workers": 1}' });
    bad(['--port', '70000'], /port.*integer from 0 to 65535/);
    bad(['--port'], /--port needs a value/);
    bad(['--rate-limit', 'fast'], /rateLimit/);
    bad(['--trusted-proxies', '10.0.0.0/99'], /trustedProxies/);
    bad(['--path', 'beacon'], /path.*starting with \//);
    bad(['stray'], /unexpected argument/);
    bad(['--config', 'missing.json'], /missing\.json.*ENOENT/);
    bad(['--config', 'c.json'], /not JSON/, { 'c.json': '{port: 1}' });
    bad(['--config', 'c.json'], /unknown option "prot"/, { 'c.json': '{"prot": 1}' });
    bad(['--config', 'c.json'], /"8787" is not valid for port/, { 'c.json': '{"port": "8787"}' });
    bad(['--config', 'c.json'], /expected a JSON object/, { 'c.json': '[]' });
  });

  test('the CLI exits with code 2 and a message on a bad option, and --help lists every option with its default', async () => {
    const run = (argv) => new Promise((resolve) => {
      const child = spawn(process.execPath, ['web/bin/h3probe.mjs', 'collector', ...argv], { cwd: root });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => { out += c; });
      child.stderr.on('data', (c) => { err += c; });
      child.on('exit', (code) => resolve({ code, out, err }));
    });
    const bad = await run(['--max-connections', '0']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /maxConnections/);
    const timeouts = await run(['--headers-timeout', '20', '--request-timeout', '10']);
    assert.equal(timeouts.code, 2);
    const help = await run(['--help']);
    assert.equal(help.code, 0);
    assert.equal(help.out.trim(), collectorHelp().trim());
    for (const o of COLLECTOR_OPTIONS) {
      const flag = `--${o.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      assert.match(help.out, new RegExp(`${flag} .*\\[default: `), flag);
    }
  });

  test('docs/collector.md has the options table of the options schema', () => {
    const doc = fs.readFileSync(path.join(root, 'docs/collector.md'), 'utf8');
    assert.ok(doc.includes(optionsMarkdownTable()), 'regenerate the table with optionsMarkdownTable() (see docs/collector.md)');
  });

  test('the example config of web/deploy is valid and the unit runs the collector with it', () => {
    const example = path.join(root, 'web/deploy/collector.example.json');
    const { options } = parseCollectorArgs(['--config', example]);
    assert.equal(options.db, '/var/lib/h3probe/beacons.sqlite');
    const unit = fs.readFileSync(path.join(root, 'web/deploy/h3probe-collector.service'), 'utf8');
    assert.match(unit, /^ExecStart=.*h3probe collector --config \/etc\/h3probe\/collector\.json$/m);
    assert.match(unit, /^StateDirectory=h3probe$/m);
  });

  test('every metric name is documented', () => {
    const doc = fs.readFileSync(path.join(root, 'docs/collector.md'), 'utf8');
    for (const m of Object.values(METRICS)) assert.ok(doc.includes(m.name), m.name);
  });
});
