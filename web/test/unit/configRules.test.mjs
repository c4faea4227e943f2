// The gate states the core's config rules for beaconUrl and configId (web/src/loadErrorTarget.js, used by the gate's
// load_error beacon): over the table of cases the host tests run through the core (host_tests/config_cases.json,
// host_tests/config_cases_test.cpp), it accepts exactly the cases the table accepts, case by case; its defaults are the
// core's.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadErrorTarget } from '../../src/loadErrorTarget.js';
import { repoRoot } from '../../stack/paths.mjs';

const table = JSON.parse(fs.readFileSync(path.join(repoRoot, 'host_tests', 'config_cases.json'), 'utf8'));
// A value as the table writes it: JSON as it is, or {"concat": [[text, times], ...]} (as config_cases_test.cpp reads it).
const valueOf = (v) => (v && typeof v === 'object' && 'concat' in v ? v.concat.map(([text, times]) => text.repeat(times)).join('') : v);

test('the gate accepts a beaconUrl and a configId exactly where the table (and so the core) does', () => {
  assert.ok(table.cases.length >= 50);
  const disagree = [];
  for (const c of table.cases) {
    const config = { ...table.base, ...('value' in c ? { [c.key]: valueOf(c.value) } : {}) };
    // As configure() keeps the page's config: a JSON copy.
    const accepted = loadErrorTarget(JSON.parse(JSON.stringify(config))) !== undefined;
    if (accepted !== c.accepted) disagree.push(`${c.name}: the gate ${accepted ? 'accepts' : 'refuses'}, the table ${c.accepted ? 'accepts' : 'refuses'}`);
  }
  assert.deepEqual(disagree, []);
});

test('the table holds what the rules turn on: ids of 64 and 65 bytes in one to four bytes a character, each kind of whitespace, each kind of URL', () => {
  const bytes = (c) => Buffer.byteLength(valueOf(c.value));
  const ids = table.cases.filter((c) => c.key === 'configId' && typeof valueOf(c.value) === 'string');
  for (const width of [1, 2, 3, 4]) {
    const wide = ids.filter((c) => [...valueOf(c.value)].some((ch) => Buffer.byteLength(ch) === width));
    assert.ok(wide.some((c) => c.accepted) && wide.some((c) => !c.accepted), `ids with ${width}-byte characters, accepted and refused`);
  }
  assert.ok(ids.some((c) => bytes(c) === 64 && c.accepted) && ids.some((c) => bytes(c) === 65 && !c.accepted));
  // Under 64 UTF-16 units yet over 64 bytes: where counting characters and counting bytes part.
  assert.ok(ids.some((c) => valueOf(c.value).length <= 64 && bytes(c) > 64 && !c.accepted));
  const urls = table.cases.filter((c) => c.key === 'beaconUrl' && typeof valueOf(c.value) === 'string').map((c) => valueOf(c.value));
  for (const ch of [' ', '\t', '\r', '\n', '\v', '\f', '\u00a0', '\u2028', '\u2029', '\u3000', '\ufeff', '\u0085']) {
    assert.ok(urls.some((u) => u.includes(ch)), `a URL with U+${ch.codePointAt(0).toString(16).padStart(4, '0')}`);
  }
  for (const start of ['/', '//', 'http://', 'https://', 'beacon', './']) assert.ok(urls.some((u) => u.startsWith(start)), start);
  assert.ok(urls.includes('') && urls.some((u) => u.length >= 10000));
});

test("the gate's defaults are the core's (wasm/core/config.hpp)", () => {
  const header = fs.readFileSync(path.join(repoRoot, 'wasm', 'core', 'config.hpp'), 'utf8');
  const coreDefault = (member) => header.match(new RegExp(`std::string ${member} = "([^"]*)";`))[1];
  assert.deepEqual(loadErrorTarget({}), [coreDefault('beacon_url'), coreDefault('config_id')]);
});
