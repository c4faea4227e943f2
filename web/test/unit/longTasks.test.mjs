// Unit tests of the main-thread attribution behind `npm run bench:longtasks` (web/bench/longTasks.mjs), on a trace
// and a CPU profile made by hand: which tasks count, how much, and under which label.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { moduleMainThreadMs, moduleTasks, tasksByLabel, unseenRequests, WORKER_ENGINE_TASKS } from '../../bench/longTasks.mjs';

const PAGE = 'https://page.h3probe.test:1/';
const PID = 7;
const TID = 1;

// A CPU profile: node 1 the root, 2 the page's own script, 3 the gate, 4 run.js called by the gate, 5 no script (the
// engine's own work: a message's deserialization, a collection), 6 a test driver's script (no URL, a function name).
const frame = (id, url, children = [], functionName = `f${id}`) => ({ id, callFrame: { functionName, url, columnNumber: 0 }, children });
const NODES = [
  frame(1, '', [2, 3, 5, 6], '(root)'), frame(2, `${PAGE}search.js`), frame(3, `${PAGE}h3probe/h3probe.js`, [4]),
  frame(4, `${PAGE}h3probe/run.js`), frame(5, '', [], '(program)'), frame(6, '', [], 'serialize'),
];

// samples: [[µs, node id]]; events: trace events on the page's main thread ({name, ts, dur, tdur, args}).
function traceOf(samples, events) {
  const profile = { nodes: NODES, startTime: 0, samples: samples.map(([, id]) => id), timeDeltas: samples.map(([t], i) => t - (i ? samples[i - 1][0] : 0)) };
  const meta = [
    { name: 'FrameCommittedInBrowser', ph: 'I', args: { data: { url: PAGE, processId: PID } } },
    { name: 'thread_name', ph: 'M', pid: PID, tid: TID, args: { name: 'CrRendererMain' } },
  ];
  return { profile, events: [...meta, ...events.map((e) => ({ ph: 'X', pid: PID, tid: TID, ...e }))] };
}
const task = (ts, dur, tdur) => ({ name: 'RunTask', ts, dur, tdur });

test('a page task counts by its share of samples with module code, labelled by the module code that ran in it', () => {
  const { profile, events } = traceOf([[1000, 2], [1100, 3], [1200, 4], [1300, 4]], [
    task(1000, 400, 4000),
    { name: 'ResourceFetcher::requestResource', ts: 1150, dur: 50, tdur: 500 },
  ]);
  const [only] = moduleTasks(profile, events, PAGE);
  assert.equal(only.ms, 3); // 3 of 4 samples had a module frame: 3/4 of 4 ms of thread time
  assert.equal(only.label, 'h3probe.js+run.js (request)');
  assert.deepEqual(only.parts, { request: 0.5 });
});

test('a message from the Worker counts whole though no sample caught module code; a task of the page alone not at all', () => {
  const { profile, events } = traceOf([[1000, 2], [5000, 5], [5100, 5]], [
    task(1000, 100, 800), // the page's own
    task(5000, 300, 1200),
    { name: 'HandlePostMessage', ts: 5010, dur: 280, tdur: 1100 },
    { name: 'SerializedScriptValueFactory::deserialize', ts: 5020, dur: 20, tdur: 200 },
  ]);
  const tasks = moduleTasks(profile, events, PAGE);
  assert.equal(tasks.length, 1);
  assert.equal(tasks[0].label, 'worker message, first');
  assert.equal(tasks[0].ms, 1.2);
  assert.equal(tasks[0].parts.deserialize, 0.2);
});

test('a task Chromium runs for the Worker counts whole, by the IPC it received or the Blink file that posted it', () => {
  const mojo = (ts, tag) => ({ name: 'Receive mojo message', ts, dur: 10, tdur: 10, args: { chrome_mojo_event_info: { mojo_interface_tag: tag } } });
  const top = (ts, dur, tdur, src_file, src_func = 'f') => ({ name: 'ThreadControllerImpl::RunTask', ts, dur, tdur, args: { src_file, src_func } });
  const { profile, events } = traceOf([[1000, 5], [2000, 5], [3000, 5], [4000, 5], [5000, 5]], [
    top(1000, 300, 900, 'ipc/ipc_mojo_bootstrap.cc'), mojo(1010, 'blink.mojom.ResourceLoadInfoNotifier'),
    top(2000, 300, 700, 'mojo/public/cpp/system/simple_watcher.cc'), mojo(2010, 'blink.mojom.DedicatedWorkerHostFactoryClient'),
    top(3000, 300, 500, 'third_party/blink/renderer/core/workers/threaded_object_proxy_base.cc', 'CountFeature'),
    // The page's own IPC: the driver's DevTools session; and the page's own timer: neither counts.
    top(4000, 300, 2000, 'ipc/ipc_mojo_bootstrap.cc'), mojo(4010, 'blink.mojom.DevToolsSession'),
    top(5000, 300, 3000, 'third_party/blink/renderer/core/scheduler/dom_timer.cc'),
    // A message from the Worker, told by where it was posted from, with devtools.timeline's task nested inside.
    top(6000, 300, 1300, 'third_party/blink/renderer/core/workers/dedicated_worker_object_proxy.cc', 'PostMessageToWorkerObject'),
    task(6010, 280, 1200),
  ]);
  const tasks = moduleTasks(profile, events, PAGE);
  assert.deepEqual(tasks.map((t) => [t.label, t.ms]), [
    ['Chromium: the Worker\'s requests reported to the page', 0.9], ['Chromium: the Worker started', 0.7],
    ['Chromium: the Worker\'s bookkeeping', 0.5], ['worker message, first', 1.3],
  ]);
});

test('a message task counts less the share of samples running other script: the page\'s, a driver\'s', () => {
  const { profile, events } = traceOf([[5000, 5], [5050, 3], [5100, 2], [5150, 6]], [
    task(5000, 300, 2000),
    { name: 'HandlePostMessage', ts: 5010, dur: 280, tdur: 1900 },
  ]);
  const [only] = moduleTasks(profile, events, PAGE);
  assert.equal(only.ms, 1); // 2 of 4 samples ran search.js or the driver: half of 2 ms
});

test('the compilation of a module script counts whole inside a task of the page; another script\'s does not', () => {
  const { profile, events } = traceOf([[1000, 2]], [
    task(1000, 900, 3000),
    { name: 'v8.compileModule', ts: 1010, dur: 300, tdur: 700, args: { data: { url: `${PAGE}h3probe/run.js` } } },
    task(3000, 900, 3000),
    { name: 'v8.compileModule', ts: 3010, dur: 300, tdur: 900, args: { data: { url: `${PAGE}search.js` } } },
  ]);
  const tasks = moduleTasks(profile, events, PAGE);
  assert.deepEqual(tasks.map((t) => [t.label, t.ms]), [['compile run.js', 0.7]]);
  assert.equal(moduleMainThreadMs(profile, events, PAGE).ms, 0.7);
});

test('tasks by label: per-load medians with a load lacking a label counting 0, and means that add up to the loads\' mean', () => {
  const loads = [
    { tasks: [{ label: 'a', ms: 2, parts: { request: 1 } }, { label: 'a', ms: 1, parts: {} }, { label: 'b', ms: 4, parts: {} }] },
    { tasks: [{ label: 'a', ms: 5, parts: {} }] },
    { tasks: [] },
  ];
  const rows = tasksByLabel(loads);
  assert.deepEqual(rows.map((r) => r.label), ['a', 'b']);
  const [a, b] = rows;
  assert.equal(a.loads, 2);
  assert.equal(a.ms, 3); // per load 3, 5, 0: the median is 3
  assert.equal(a.perLoad, 1); // tasks per load 2, 1, 0
  assert.deepEqual(a.parts, { request: 0 }); // 1, 0, 0
  assert.equal(b.ms, 0);
  assert.equal(a.mean + b.mean, (3 + 4 + 5) / 3);
});

test('a trace without the page\'s frame is refused with the reason', () => {
  const { profile } = traceOf([], []);
  assert.throws(() => moduleTasks(profile, [], PAGE), /no frame of https:\/\/page\.h3probe\.test:1\/ in the trace/);
});

test('a floor load whose Worker\'s requests the trace did not show reported is named; so is one that made none', () => {
  const reported = { label: WORKER_ENGINE_TASKS['blink.mojom.ResourceLoadInfoNotifier'], ms: 0.5, parts: {} };
  const other = { label: 'worker message, first', ms: 1, parts: {} };
  const loads = [
    { requests: 2, tasks: [reported, reported, reported, other] },
    { requests: 3, tasks: [reported, other] }, // Chromium reporting elsewhere: the figures would be low
    { requests: 0, tasks: [reported] }, // the floor's observer saw nothing
  ];
  assert.deepEqual(unseenRequests(loads), [{ load: 2, requests: 3, reported: 1 }, { load: 3, requests: 0, reported: 1 }]);
});
