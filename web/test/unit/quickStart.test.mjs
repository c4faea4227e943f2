// The README's quick start, run as written: its origins command makes a Caddyfile that Caddy accepts, its collector
// and doctor commands parse, the page config of its snippet names the origins and the beacon URL those commands serve,
// and the newcomer reads at most 300 words (code included) before the first beacon.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../devstack/paths.mjs';
import { parseCollectorArgs } from '../../server/collectorOptions.mjs';
import { doctorOptions } from '../../cli/doctor.mjs';

const README = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const start = README.indexOf('## Quick start');
const quick = README.slice(start, README.indexOf('\n## ', start + 1));
// The fenced blocks of the quick start, by language, in order.
const blocks = [...quick.matchAll(/```(\w+)\n([\s\S]*?)\n```/g)].map((m) => ({ lang: m[1], text: m[2] }));
// The shell commands of step 3: continuation lines joined, a trailing & dropped, as argv.
const commands = blocks.filter((b) => b.lang === 'sh').at(-1).text.replace(/\\\n\s*/g, ' ').split('\n')
  .map((l) => l.replace(/\s*&\s*$/, '').trim().split(/\s+/));
const command = (...head) => {
  const found = commands.find((argv) => head.every((w, i) => argv[i] === w));
  assert.ok(found, `the quick start runs ${head.join(' ')}: ${JSON.stringify(commands)}`);
  return found.slice(head.length);
};
const flag = (argv, name) => argv[argv.indexOf(`--${name}`) + 1];
const config = Object.fromEntries([...blocks.find((b) => b.lang === 'js').text.matchAll(/(\w+): '([^']*)'/g)].map((m) => [m[1], m[2]]));

test('the origins command makes a Caddyfile Caddy accepts, for the origins and beacon URL the snippet configures', () => {
  const argv = command('npx', 'h3probe', 'origins');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-quick-')), 'Caddyfile');
  argv[argv.indexOf('--out') + 1] = out;
  const made = spawnSync(process.execPath, [path.join(repoRoot, 'web/bin/h3probe.mjs'), 'origins', ...argv], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const adapted = spawnSync('caddy', ['adapt', '--config', out, '--adapter', 'caddyfile'], { encoding: 'utf8' });
  assert.equal(adapted.status, 0, adapted.stderr);
  assert.equal(config.h2Origin, `https://${flag(argv, 'h2')}${argv.includes('--h2-port') ? `:${flag(argv, 'h2-port')}` : ''}`);
  assert.equal(config.h3Origin, `https://${flag(argv, 'h3')}`);
  assert.equal(config.beaconUrl, `https://${flag(argv, 'collector')}/beacon`);
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
});

test('the collector command parses, listening where the origins command proxies the beacons', () => {
  const { options } = parseCollectorArgs(command('npx', 'h3probe', 'collector'));
  assert.equal(`${options.host}:${options.port}`, flag(command('npx', 'h3probe', 'origins'), 'collector-upstream'));
  assert.equal(options.db, '/var/lib/h3probe/beacons.sqlite');
});

test('the doctor command parses and checks the origins and beacon URL the snippet configures', () => {
  // Every flag of the command takes a value (--flag VALUE), as doctor's parser reads them.
  const argv = command('npx', 'h3probe', 'doctor');
  const values = Object.fromEntries(argv.flatMap((a, i) => (i % 2 === 0 ? [[a.replace(/^--/, ''), argv[i + 1]]] : [])));
  const { options, problems } = doctorOptions(values);
  assert.deepEqual(problems, []);
  assert.deepEqual([options.h2.origin, options.h3.origin, String(options.collector)], [config.h2Origin, config.h3Origin, config.beaconUrl]);
});

test('at most 300 words, code included, from the top of the README to the first beacon (the end of step 3)', () => {
  const words = README.slice(0, README.indexOf('**4.')).split(/\s+/).filter(Boolean).length;
  assert.ok(words <= 300, `${words} words`);
});
