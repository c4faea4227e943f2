// The hand-written web/src/h3probe.d.ts against the code it describes (the gate h3probe.js, the lazily loaded run.js
// and the worker.js it starts): exports, config keys, status words and status fields.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';

const read = (relative) => fs.readFileSync(new URL(relative, import.meta.url), 'utf8');
const dts = read('../../src/h3probe.d.ts');
const gateSource = read('../../src/h3probe.js');
const runSource = `${read('../../src/run.js')}\n${read('../../src/worker.js')}`;
const loaderSource = `${gateSource}\n${runSource}`;
const configSource = read('../../../wasm/core/config.cpp');
const bindingsSource = read('../../../wasm/bindings/browser_bindings.cpp');

// The body of `interface NAME { ... }` or `type NAME = ...;` in the .d.ts (its declarations are flat, one level).
function declaration(kind, name) {
  const pattern = kind === 'interface' ? new RegExp(`interface ${name} \\{([^}]*)\\}`) : new RegExp(`type ${name} =([^;]*);`);
  const match = dts.match(pattern);
  assert.ok(match, `h3probe.d.ts declares ${kind} ${name}`);
  return match[1].replace(/\/\*\*[\s\S]*?\*\//g, '');
}
const propertyNames = (body) => [...body.matchAll(/^\s*(\w+)\??:/gm)].map((m) => m[1]);
const stringLiterals = (text) => [...text.matchAll(/'([a-z0-9_-]+)'/g)].map((m) => m[1]);

// Every string in a C++ or JS array initializer, e.g. kKnownKeys[] = {"a", "b"} or LOADER_KEYS = ['a', 'b'].
function arrayStrings(source, name) {
  const match = source.match(new RegExp(`${name}(?:\\[\\])?\\s*=\\s*[[{]([^\\]}]*)[\\]}]`));
  assert.ok(match, `found ${name}`);
  return [...match[1].matchAll(/["']([^"']+)["']/g)].map((m) => m[1]);
}

describe('h3probe.d.ts', () => {
  test('declares every export of h3probe.js, and nothing it does not export', async () => {
    const module = await import('../../src/h3probe.js');
    const exported = Object.keys(module).sort();
    const declared = [...dts.matchAll(/^export (?:declare )?(?:function|const|let) (\w+)/gm)].map((m) => m[1]).sort();
    assert.ok(exported.length > 0);
    assert.deepEqual(declared, exported);
  });

  test('names every config key the core accepts and every key the loader reads, and no other', () => {
    const coreKeys = arrayStrings(configSource, 'kKnownKeys');
    const loaderKeys = arrayStrings(loaderSource, 'LOADER_KEYS');
    assert.ok(coreKeys.includes('h2Origin') && coreKeys.includes('sampleRate'), 'the core\'s key list was read');
    assert.deepEqual(loaderKeys.sort(), ['moduleUrl', 'remoteConfigTimeoutMs', 'remoteConfigUrl', 'worker']);
    const declared = propertyNames(declaration('interface', 'H3probeConfig')).sort();
    assert.deepEqual(declared, [...coreKeys, ...loaderKeys].sort());
  });

  test('lists every state the loader can report and every run state the core can report', () => {
    const loaderStates = new Set([...loaderSource.matchAll(/(?:state = |return )'(\w+)'/g)].map((m) => m[1]));
    const coreStart = bindingsSource.match(/searchCompleted\(\) \{([\s\S]*?)\n {4}\}/);
    assert.ok(coreStart, 'found Session::searchCompleted');
    for (const m of coreStart[1].matchAll(/return "(\w+)"/g)) if (m[1] !== 'unknown') loaderStates.add(m[1]);
    const declaredStates = new Set([...stringLiterals(declaration('type', 'LoaderState')),
      ...stringLiterals(declaration('type', 'SearchOutcome'))]);
    assert.ok(loaderStates.size >= 10, `read the loader's states: ${[...loaderStates]}`);
    for (const s of loaderStates) assert.ok(declaredStates.has(s), `state '${s}' is declared`);

    const coreState = bindingsSource.match(/std::string state\(\) const \{([\s\S]*?)\n {4}\}/);
    assert.ok(coreState, 'found Session::state');
    const runStates = [...coreState[1].matchAll(/return "(\w+)"/g)].map((m) => m[1]).filter((s) => s !== 'unknown');
    assert.deepEqual(stringLiterals(declaration('type', 'RunState')).sort(), runStates.sort());
  });

  test('describes the fields status() returns', () => {
    const body = gateSource.match(/export function status\(\) \{([\s\S]*?)\n\}/);
    assert.ok(body, 'found status()');
    const returned = new Set([...body[1].matchAll(/return \{ (\w+), (\w+): /g)].flatMap((m) => [m[1], m[2]]));
    const details = [...runSource.matchAll(/detail\(\) \{([\s\S]*?)\n {4}\}/g)];
    assert.equal(details.length, 2, 'found the detail() of run.js and of worker.js');
    // Fields read from the session (`name: session...`) and the run's own (`name` shorthand).
    for (const detail of details) {
      for (const m of detail[1].matchAll(/(\w+): session|[{,]\s*(\w+)\s*(?=[,}])/g)) returned.add(m[1] ?? m[2]);
    }
    assert.ok(returned.has('run'), 'found the run detail in status()');
    assert.deepEqual(propertyNames(declaration('interface', 'H3probeStatus')).sort(), [...returned].sort());
  });
});
