// h3probe: the module a page embeds. This file is all a page loads before its first completed search: the gate (kill
// switch, sampling draw, remote config). For a page load that is sampled, after its search, it starts the run in a
// dedicated Worker (worker.js, which loads the WASM glue and the .wasm), and keeps on the main thread only what must be
// there: the visibility and pagehide listeners, and the run's latest partial beacon, sent if the page is hidden before
// the worker has sent the run's own. Where no Worker can run the core, run.js runs it here. Nothing throws into the
// page and nothing is written to its console.
import { fetchRemoteConfig } from './fetchRemoteConfig.js';
import { loadErrorTarget } from './loadErrorTarget.js';
import { sendBeaconByFetch } from './sendBeaconByFetch.js';

const MAX_ERRORS = 20;

let options;
let run; // the promise of this page load's run, once searchCompleted() was called
let state = 'unconfigured';
let remoteConfig; // fetched at most once per page load
let active; // the run on the main thread (run.js), when no Worker runs it
// What status() tells of the run: the worker's last word on it ({run, pageLoadId, beacon}) and beaconQueued; or this
// page load's load_error beacon, once sent ({pageLoadId, beacon, beaconQueued}).
let detail = {};
let unwatch = () => {};
let blocked = false; // a CSP blocked the worker (a securitypolicyviolation of worker-src)
const violation = (event) => {
  blocked ||= event.effectiveDirective === 'worker-src';
};
// The event bubbles from the document to the window (whose methods take the global object for a missing this).
const watchCsp = (on) => (on ? addEventListener : removeEventListener)('securitypolicyviolation', violation);
let ended = false; // the run has ended (beacon sent, or no run will start)
let loading; // [config, started] of a sampled page load, once it loads the run
let settle;
const done = new Promise((resolve) => (settle = resolve));
const errors = [];

const random = (n) => crypto.getRandomValues(new Uint32Array(n));

// Errors stay inside the module: in status() and, once the core is loaded, in the beacon. Never on the console.
function keep(text) {
  if (text && errors.length < MAX_ERRORS) errors.push(text);
}

function record(where, error) {
  const text = `${where}: ${error?.message || error}`;
  keep(text);
  active?.noteError(text); // never throws (run.js)
}

// Gives a beacon to the browser with navigator.sendBeacon, the one way a page being hidden or left can still send:
// the partial beacon of a page hidden mid-run, a beacon the worker could not send, a load_error beacon, the main
// thread's beacon; by a keepalive fetch where the browser refuses it (its beacons turned off, a quota) or has none.
// Returns true: the beacon was handed to the browser one way or the other (a failed fetch is kept as an error).
function sendBeacon(url, body) {
  try {
    if (navigator.sendBeacon(url, body)) return true;
  } catch (error) {
    record('beacon', error);
  }
  return sendBeaconByFetch(url, body).catch((error) => record('beacon', error)), true;
}

// Calls hidden() when the page is hidden or left; returns a function that removes the listeners again.
function watchVisibility(hidden) {
  const visibility = () => document.visibilityState === 'hidden' && hidden();
  document.addEventListener('visibilitychange', visibility);
  addEventListener('pagehide', hidden);
  return () => {
    document.removeEventListener('visibilitychange', visibility);
    removeEventListener('pagehide', hidden);
  };
}

// Sets the experiment's configuration (docs/embedding.md, "Config keys"). Call before searchCompleted().
export function configure(config) {
  try {
    options = JSON.parse(JSON.stringify(config || {}));
    if (state === 'unconfigured') state = 'configured';
  } catch (error) {
    record('configure', error);
  }
}

// The sampling draw is made once per page load, here, before anything is downloaded: a page load that is not sampled
// costs no byte and no request.
function sampledOut(config, draw) {
  return typeof config.sampleRate === 'number' && !(draw < config.sampleRate);
}

// A sampled page load that cannot load the run, its glue or its .wasm has no core to write its beacon: the gate sends
// one itself, outcome "load_error", with the reason the loader tagged the error with (error.loadError: a name from
// H3PROBE_LOAD_ERROR_REASONS in wasm/core/beacon.hpp; run.js and worker.js tag the rest). Only to a beacon URL and
// with a config id the core's config rules accept (loadErrorTarget.js): a page whose config the core would refuse
// sends nothing, as its run would not.
function sendLoadError(reason) {
  const [config, started] = loading;
  const [url, configId] = loadErrorTarget(config) || [];
  if (!url) return;
  // A load_error beacon is its page load's one run: one id names both.
  const pageLoadId = random(2).join('');
  // error: the last problem kept, cut by characters (never inside one) to stay within the decoder's 500 bytes.
  const body = JSON.stringify({
    schema: 'h3probe/1', run_id: pageLoadId, page_load_id: pageLoadId, config_id: configId, outcome: 'load_error',
    reason, error: [...String(errors.slice(-1))].slice(0, 120).join(''),
    run_ms: Math.round(performance.now() - started), sample_rate: config.sampleRate,
    context: { page_origin: location.origin }, samples: [], // no sample_rate: 1
  });
  detail = { pageLoadId, beacon: body, beaconQueued: sendBeacon(url, body) };
}

// The run is over: whenDone() resolves once the state is final (a run that ends inside start() settles after it, when
// searchCompleted() has its outcome).
function end() {
  ended = true;
  watchCsp(); // a run that could not load run.js has no one else to stop it
  if (state !== 'loading') settle(status());
}

async function start() {
  if (!options) return 'not_configured';
  // (Every engine had fetch() before WebAssembly, so WebAssembly stands for both.)
  if (!(self.PerformanceObserver && self.WebAssembly && self.AbortController)) return 'unsupported';
  if (document.visibilityState === 'hidden') return 'hidden';
  const local = options;
  const draw = random(1)[0] / 2 ** 32;
  if (local.enabled === false) return 'disabled';
  if (sampledOut(local, draw)) return 'not_sampled';

  const started = performance.now();
  let merged = local;
  let remoteProblem = '';
  if (local.remoteConfigUrl) {
    remoteConfig ??= fetchRemoteConfig(local.remoteConfigUrl, local.remoteConfigTimeoutMs ?? 2000);
    const remote = await remoteConfig;
    if (typeof remote === 'string') {
      remoteProblem = remote;
    } else {
      merged = { ...local, ...remote };
      if (remote.enabled === false) return 'disabled';
      if (sampledOut(remote, draw)) return 'not_sampled';
      // The page load passed both draws: its probability is the smaller rate.
      if (typeof local.sampleRate === 'number' && typeof merged.sampleRate === 'number') {
        merged.sampleRate = Math.min(local.sampleRate, merged.sampleRate);
      }
    }
  }

  state = 'loading';
  loading = [merged, started];
  const args = {
    local: local.moduleUrl ? { ...local, moduleUrl: new URL(local.moduleUrl, location).href } : local,
    // errors: the problems met so far (the core notes them when it has its config).
    merged, remoteProblem, startedAt: performance.timeOrigin + started, errors,
    pageOrigin: location.origin, // never the path or query: they can hold personal data
  };
  const outcome = local.worker !== false && self.Worker && await inWorker(args);
  if (outcome) return outcome;
  const { startRun } = await import('./run.js').catch((error) => {
    throw Object.assign(error, { loadError: 'run_import' });
  });
  active = startRun({ record, sendBeacon, watch: watchVisibility, onEnd: end, csp: () => (watchCsp(), blocked) });
  return active.start(args);
}

// The run in a dedicated Worker. Resolves to its outcome, or to undefined when no worker could run the core: why in
// args.fallback (a name of H3PROBE_WORKER_FALLBACK_REASONS: the constructor threw, the worker did not load, the core
// did not load in it), the problem in the errors. The worker, written so that bundlers follow it to a file of its own; beside the glue when
// moduleUrl is set. A Worker must come from the page's own origin: elsewhere the constructor throws or the worker fails
// to load, and the run falls back to the main thread.
function inWorker(args) {
  return new Promise((resolve) => {
    const { moduleUrl } = args.local;
    let worker;
    const fallBack = (reason, problem) => {
      record('worker', problem || reason); // Firefox tells no more than that the worker did not load
      worker?.terminate();
      args.fallback = reason;
      resolve();
    };
    // Heard until the outcome comes, or, on the main thread, until run.js has read it (csp()).
    watchCsp(1);
    try {
      worker = moduleUrl ? new Worker(new URL('worker.js', moduleUrl), { type: 'module' })
        : new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    } catch (error) {
      return fallBack('constructor', error);
    }
    let answered = false; // the outcome is known
    let partial; // the latest partial beacon, [url, body]
    const stop = () => {
      unwatch();
      end();
    };
    // A page being hidden may never be shown again, and cannot wait for the worker: the run's latest partial beacon
    // goes from here, synchronously, and the worker stops.
    const hidden = () => {
      if (partial) Object.assign(detail, { run: 'done', beacon: partial[1], beaconQueued: sendBeacon(...partial) });
      worker.terminate();
      stop();
    };
    worker.onmessage = ({ data }) => {
      if (data.outcome === null) return fallBack('core_load', data.error);
      keep(data.error);
      Object.assign(detail, data.status);
      partial = data.partial || partial;
      if ('outcome' in data) {
        answered = true;
        watchCsp();
        resolve(data.outcome);
        if (data.outcome === 'started') unwatch = watchVisibility(hidden);
      }
      // The run is over: its beacon sent by the worker, or handed to the page (unsent), or none.
      if (data.end) {
        if (detail.beacon) detail.beaconQueued = !data.unsent || sendBeacon(...data.unsent);
        stop();
      }
    };
    // A worker that cannot load (not found, not JavaScript, blocked by a CSP) fails here with an empty message: the
    // page runs the core.
    worker.onerror = (event) => {
      event.preventDefault();
      if (!answered) return fallBack('worker_load', event.message);
      record('worker', event.message);
      stop();
    };
    worker.postMessage({ start: args });
  });
}

// Call when the user's search has completed (results shown). The first call of a page load starts the run; later
// calls return the same promise. The promise never rejects: it resolves to a status word (docs/embedding.md).
export function searchCompleted() {
  if (!run) {
    run = start().catch((error) => {
      record('start', error);
      active?.close();
      if (error?.loadError) sendLoadError(error.loadError);
      return 'error';
    }).then((outcome) => {
      state = outcome;
      // A started run ends later, when the core has sent its beacon. A search in a hidden tab is not final: no run
      // started, so a later search in the visible tab may still run. Every other outcome is final now.
      if (outcome === 'hidden') run = null;
      else if (outcome !== 'started' || ended) end();
      return outcome;
    });
  }
  return run;
}

// What the module did so far, for the host page's own diagnostics and for tests.
export function status() {
  // detail after the main thread's run: the load_error beacon, if its core did not load.
  return { state, errors: [...errors], ...active?.detail(), ...detail };
}

// Resolves with status() once this page load's run is over: its beacon sent, or no run (not sampled, disabled,
// hidden, an error...). Waits for searchCompleted(). Never rejects.
export function whenDone() {
  return done;
}

// Calls callback(status()) once, when whenDone() resolves. An error the callback throws is kept in status().errors.
export function onResult(callback) {
  done.then((result) => {
    try {
      callback(result);
    } catch (error) {
      record('onResult', error);
    }
  });
}
