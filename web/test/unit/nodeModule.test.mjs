// The Node module's Embind surface (the C++ core compiled to WASM): what the decoder returns, that bad input comes back
// as a value and never as a throw, and that h3probeNode.d.ts names exactly what the core's lists hold.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { loadH3probeNode } from '../../server/h3probeNode.mjs';

const core = await loadH3probeNode();
const schema = core.schema();
const dts = fs.readFileSync(new URL('../../server/h3probeNode.d.ts', import.meta.url), 'utf8');

/** The member names of `interface Name { ... }` in the .d.ts. */
function members(name) {
  const body = dts.match(new RegExp(`interface ${name} \\{([\\s\\S]*?)\\n\\}`))?.[1];
  assert.ok(body, `interface ${name} is in the .d.ts`);
  return body.split("\n").map((l) => l.match(/^\s{2}(\w+)\??[:(]/)?.[1]).filter(Boolean);
}
/** The string members of `type Name = 'a' | 'b' ...;`. */
function union(name) {
  const body = dts.match(new RegExp(`type ${name} =([\\s\\S]*?);`))?.[1];
  assert.ok(body, `type ${name} is in the .d.ts`);
  return [...body.matchAll(/'(\w+)'/g)].map((m) => m[1]);
}

const sample = (phase, idx, origin, protocol, extra = {}) => ({ phase, idx, origin, result: 'ok', http_status: 204, protocol,
  reused: true, network_ms: 10 + idx, ...extra });
const beacon = (extra = {}) => ({ schema: 'h3probe/1', run_id: 'r1', page_load_id: 'p1', config_id: 'c', module_version: '0.1.0',
  order: 'h2-first', arms: 'h2-h3', outcome: 'complete', error: '', samples: [sample('prewarm', 0, 'h3', 'h2'), sample('control', 0, 'h2', 'h2'),
    sample('treatment', 0, 'h3', 'h3'), sample('treatment', 1, 'h3', 'h2')], ...extra });

test('the .d.ts names every stored column, class and metric the core defines, and no other', () => {
  const metrics = schema.metrics;
  assert.deepEqual(members('StoredRun'), [...schema.runColumns.map((c) => c.name), 'arm_counts', ...metrics.map((m) => `arm_${m}`), 'setup']);
  assert.deepEqual(members('StoredRequest'), [...schema.requestColumns.map((c) => c.name), ...schema.durations.map((d) => d.name)]);
  assert.deepEqual(union('RequestClass'), schema.requestClasses.map((c) => c.name));
  assert.deepEqual(union('Metric'), metrics);
  assert.deepEqual(union('SetupOutcome'), schema.setupOutcomes.map((o) => o.name));
  assert.deepEqual(members('H3probeNode'), ['decodeBeacon', 'buildReport', 'inferReport', 'sampleBiases', 'quantiles', 'schema', 'version']);
  assert.deepEqual(Object.keys(core).filter((k) => members('H3probeNode').includes(k)).sort(),
    ['buildReport', 'decodeBeacon', 'inferReport', 'quantiles', 'sampleBiases', 'schema', 'version']);
});

test('the .d.ts types the aggregates that cross the binding with the fields the core declares, and no other', () => {
  const { fields } = schema.aggregates;
  assert.deepEqual(Object.keys(fields), ['Aggregates', 'GroupAggregates', 'FailureSums', 'SampleAggregates', 'MomentSums', 'RankValue', 'BelowEntry',
    'CrossEntry', 'Needs', 'RankNeed', 'BelowNeed', 'CrossNeed']);
  for (const [name, list] of Object.entries(fields)) assert.deepEqual(members(name), list, name);
});

// A run's aggregates as a warehouse would hand them: group 0 overall, 1 the one group, n values per arm.
function aggregatesOf(n, extra = {}) {
  const group = (name) => ({ name, runs: n, requests: 2 * n, missing_metric: 0,
    classes: [schema.requestClasses.map((c) => (c.name === 'usable_control' ? n : 0)), schema.requestClasses.map((c) => (c.name === 'usable_treatment' ? n : 0))],
    failures: Object.fromEntries(schema.aggregates.fields.FailureSums.map((f) => [f, f === 'runs' ? n : f.startsWith('n') ? n : 0])),
    runs_paired: n, samples: [0, 1, 2].map(() => ({ n, runs: n, stats: [], below: [] })),
    diffs: { n: 0, sum: '0', sum_sq: '0' }, diffs_h2_first: { n: 0, sum: '0', sum_sq: '0' }, diffs_h3_first: { n: 0, sum: '0', sum_sq: '0' }, cross: [] });
  return { version: schema.aggregates.version, groups: [group('overall'), group('g')], ...extra };
}

test('inferReport reads named, typed aggregates one round at a time; another version, a wrong field or too many rounds is an error', () => {
  const options = { percentiles: Float64Array.of(0.5) };
  const first = core.inferReport(aggregatesOf(20), options, 0);
  assert.equal(first.error, '');
  assert.ok(first.needs.ranks.length > 0, 'the estimates\' ranks are asked first');
  assert.deepEqual(Object.keys(first.needs.ranks[0]), ['group', 'sample', 'rank']);
  assert.deepEqual(first.groups, []);
  assert.match(core.inferReport(aggregatesOf(20, { version: schema.aggregates.version + 1 }), options, 0).error,
    new RegExp(`aggregates of format ${schema.aggregates.version + 1}; this h3probe reads format ${schema.aggregates.version}`));
  const bad = aggregatesOf(20);
  bad.groups[1].samples[0].runs = -1;
  assert.match(core.inferReport(bad, options, 0).error, /do not read: runs is not a count/);
  const short = aggregatesOf(20);
  short.groups[1].samples.pop();
  assert.match(core.inferReport(short, options, 0).error, /samples is not a list of 3/);
  const sums = aggregatesOf(20);
  sums.groups[0].diffs.sum = '12x';
  assert.match(core.inferReport(sums, options, 0).error, /sum is not an exact sum/);
  // A source that never delivers: the core, not the caller, says when the rounds run out.
  const rounds = [];
  for (let round = 0; ; round++) {
    const out = core.inferReport(aggregatesOf(20), options, round);
    rounds.push(round);
    if (out.error) {
      assert.match(out.error, /still needs aggregates after \d+ rounds/);
      break;
    }
  }
  assert.ok(rounds.length > 2 && rounds.length < 20, `${rounds.length} rounds`);
});

test('the decoder returns the rows to store, each request with its class, in the shapes the .d.ts declares', () => {
  const d = core.decodeBeacon(JSON.stringify(beacon({ context: { rtt_ms: 50 } })));
  assert.equal(d.ok, true);
  assert.deepEqual(Object.keys(d.run), members('StoredRun'));
  assert.equal(d.run.rtt_ms, 50);
  assert.equal(d.run.downlink_mbps, null);
  assert.ok(d.run.arm_counts instanceof Uint8Array);
  assert.deepEqual(d.requests.map((q) => q.request_class), ['prewarm', 'usable_control', 'usable_treatment', 'fallback']);
  assert.deepEqual(Object.keys(d.requests[0]), members('StoredRequest'));
  // Every measured request holds its value in the arm it was assigned to, the fallback too: control first.
  assert.deepEqual([...new Float64Array(d.run.arm_network_ms.slice().buffer)], [10, 10, 11]);
});

test('the rows keep every number exactly, null where the beacon had none, and text as sent', () => {
  // However the rows cross from WebAssembly into JavaScript, no double may lose a digit on the way.
  const odd = [0.1 + 0.2, 12.345678901234567, 1e-7, 4321.123456789012, 5e-324, 1234.5000000000002];
  const samples = odd.map((v, idx) => sample('control', idx, 'h2', 'h2', { network_ms: v, dns_ms: null }));
  const text = 'a "quoted" \\ word, a tab\t, é and 😀';
  const d = core.decodeBeacon(JSON.stringify(beacon({ samples, error: text, context: { rtt_ms: 0.30000000000000004 } })));
  assert.equal(d.ok, true);
  assert.deepEqual(d.requests.map((q) => q.network_ms), odd);
  assert.deepEqual(d.requests.map((q) => q.dns_ms), odd.map(() => null));
  assert.equal(d.run.rtt_ms, 0.30000000000000004);
  assert.equal(d.run.error, text);
  assert.equal(d.requests[0].reused, 1);
  assert.equal(typeof d.requests[0].idx, 'number');
});

test('numbers written with more digits than a double holds read as JSON.parse reads them (correctly rounded)', () => {
  // The decoder (nlohmann/json's lexer, musl's strtod) must round every decimal text to the nearest double, here on
  // texts where a careless parser goes wrong.
  const texts = ['9007.199254740993', '2.2250738585072011e-308', '2.225073858507201e-308', '4.9406564584124654e-324',
    '2.4703282292062328e-324', '0.1000000000000000055511151231257827', '123.456e-2', '1E2', '599999.99999999999999',
    '1.00000000000000011102230246251565404236316680908203125', '8.589973e-315', '0'];
  const samples = texts.map((_, idx) => sample('control', idx, 'h2', 'h2', { network_ms: `@${idx}@` }));
  const json = JSON.stringify(beacon({ samples })).replace(/"@(\d+)@"/g, (_, i) => texts[Number(i)]);
  const d = core.decodeBeacon(json);
  assert.equal(d.ok, true, d.error);
  const expected = texts.map((t) => JSON.parse(t));
  assert.deepEqual(d.requests.map((q) => q.network_ms), expected);
});

test('the decoder takes the UTF-8 bytes of a beacon as it takes its text; bytes that are not UTF-8 are refused', () => {
  const text = JSON.stringify(beacon({ error: 'é 😀' }));
  const fromBytes = core.decodeBeacon(Buffer.from(text));
  assert.equal(fromBytes.ok, true);
  assert.deepEqual(fromBytes, core.decodeBeacon(text));
  assert.deepEqual(core.decodeBeacon(new TextEncoder().encode(text)), fromBytes);
  const bad = Buffer.from(text.replace('é', 'XX'));
  bad[bad.indexOf('XX')] = 0xff;
  assert.deepEqual(core.decodeBeacon(bad), { ok: false, error: 'beacon is not valid JSON' });
  assert.deepEqual(core.decodeBeacon(42), { ok: false, error: 'beacon must be a string or a Uint8Array' });
});

test('bad input comes back as a value naming the problem, never as a throw', () => {
  assert.deepEqual(core.decodeBeacon('not json'), { ok: false, error: 'beacon is not valid JSON' });
  assert.match(core.decodeBeacon(JSON.stringify(beacon({ order: 'random' }))).error, /^order has an unknown value/);
  assert.match(core.decodeBeacon('['.repeat(schema.limits.maxJsonDepth + 1)).error, /nests deeper than/);
  assert.match(core.decodeBeacon(' '.repeat(schema.limits.maxBeaconBytes + 1)).error, /larger than/);
  const tooManyErrors = beacon({ errors: Array.from({ length: schema.limits.maxErrors + 1 }, () => 'e') });
  assert.match(core.decodeBeacon(JSON.stringify(tooManyErrors)).error, new RegExp(`at most ${schema.limits.maxErrors} strings`));
  assert.match(core.buildReport(new Uint8Array(0), { groups: [] }, { method: 'magic' }).error, /method must be delta or bootstrap/);
  assert.match(core.buildReport(new Uint8Array([9, 0, 1, 2]), { groups: ['a'] }, {}).error, /names no group/);
});

test('the report reads records in chunks exactly as in one piece, wherever the chunks are cut', () => {
  const records = [];
  for (let i = 0; i < 30; i++) {
    const d = core.decodeBeacon(JSON.stringify(beacon({ run_id: `r${i}`, order: i % 2 ? 'h3-first' : 'h2-first',
      samples: [sample('control', 0, 'h2', 'h2', { network_ms: 20 + i }), sample('treatment', 0, 'h3', 'h3', { network_ms: 18 + (i % 7) })] })));
    records.push(Uint8Array.of(1 + (i % 2), 0), d.run.arm_counts, d.run.arm_network_ms);
  }
  const whole = Buffer.concat(records);
  const one = core.buildReport(whole, { groups: ['a', 'b'] }, {});
  assert.equal(one.error, '');
  assert.equal(one.groups[0].runs, 30);
  const cuts = [whole.subarray(0, 7), whole.subarray(7, 500), whole.subarray(500)];
  assert.deepEqual(core.buildReport(cuts, { groups: ['a', 'b'] }, {}), one);
});

test('exact quantiles match the type-7 definition', () => {
  assert.deepEqual([...core.quantiles([1, 2, 3, 4], [0, 0.5, 0.9, 1])], [1, 2.5, 3.7, 4]);
});

// Awaiting an asynchronous WASM compile leaves Node's event loop idle, and Node 20 then waits on V8's background tasks in a
// way that can deadlock (nodejs/node#54918: one start of a bench in 23 hung here). The module is compiled synchronously,
// so it is ready before the event loop turns once: checked in a fresh process, where nothing else is loaded.
test('the core is ready before the event loop turns once (no asynchronous compile to wait on)', async () => {
  const { execFileSync } = await import('node:child_process');
  const script = `import { loadH3probeNode } from ${JSON.stringify(new URL('../../server/h3probeNode.mjs', import.meta.url).href)};
let ready = false;
loadH3probeNode().then(() => { ready = true; });
setImmediate(() => console.log(ready ? 'ready' : 'not ready'));`;
  assert.equal(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim(), 'ready');
});
