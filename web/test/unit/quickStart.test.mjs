// The README's quick start, run as written: its origins command makes a Caddyfile that Caddy accepts, its collector
// and doctor commands parse, its trial command parses with the real CLI, the page config of its snippet names the
// origins and the beacon URL those commands serve, and the newcomer reads at most 300 words (code included) before the
// first beacon (the trial's). web/test/e2e/package.test.mjs runs the trial command literally.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../stack/paths.mjs';
import { parseCollectorArgs } from '../../server/collectorOptions.mjs';
import { doctorOptions } from '../../cli/doctor.mjs';
import { trialOptions } from '../../cli/trial.mjs';

const README = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const start = README.indexOf('## Quick start');
const quick = README.slice(start, README.indexOf('\n## ', start + 1));
// The fenced blocks of the quick start, by language, in order.
const blocks = [...quick.matchAll(/```(\w+)\n([\s\S]*?)\n```/g)].map((m) => ({ lang: m[1], text: m[2] }));
// The shell commands of the deployment step (the last block): continuation lines joined, a trailing & dropped, as argv.
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

// The trial command (step 3) as the shell splits it: `sh -c` prints each word of the joined line.
const trialLine = (text) => /^npx h3probe trial .*$/m.exec(text.replace(/\\\n\s*/g, ' '))?.[0];
const trialArgv = () => spawnSync('sh', ['-c', `printf '%s\\n' ${trialLine(quick)}`], { encoding: 'utf8' }).stdout.trim().split('\n');

test('the trial command parses with the real CLI and serves the origins and beacon URL the snippet configures', () => {
  const argv = trialArgv();
  assert.deepEqual(argv.slice(0, 3), ['npx', 'h3probe', 'trial']);
  // --site names the user's build folder: a folder of this test stands in for it.
  const site = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-quick-site-'));
  const args = argv.slice(3);
  args[args.indexOf('--site') + 1] = site;
  const options = trialOptions(args);
  fs.rmSync(site, { recursive: true, force: true });
  assert.deepEqual([options.h2.href, options.h3.href, options.beacon.href],
    [new URL(config.h2Origin).href, new URL(config.h3Origin).href, config.beaconUrl]);
  assert.equal(options.search.verb, 'click');
  assert.equal(options.loads, 10);
  assert.equal(flag(argv, 'site'), 'dist/', 'Vite\'s build folder, as the recipe builds it');
});

test('docs/deploying.md gives the README\'s trial command, word for word', () => {
  const deploying = fs.readFileSync(path.join(repoRoot, 'docs', 'deploying.md'), 'utf8');
  assert.ok(trialLine(quick));
  assert.equal(trialLine(deploying), trialLine(quick));
});

test('at most 300 words, code included, from the top of the README to the first beacon (the end of step 3, the trial)', () => {
  const words = README.slice(0, README.indexOf('**4.')).split(/\s+/).filter(Boolean).length;
  assert.ok(words <= 300, `${words} words`);
});
