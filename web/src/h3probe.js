// h3probe: the module a page embeds. This file is all a page loads before its first completed search: the gate (kill
// switch, sampling draw, remote config). The run itself (run.js), the WASM glue and the .wasm load only for a page
// load that is sampled, after its search. Nothing throws into the page and nothing is written to its console.
import { fetchRemoteConfig } from './fetchRemoteConfig.js';
import { loadErrorTarget } from './loadErrorTarget.js';

const MAX_ERRORS = 20;

let options = null;
let run = null; // the promise of this page load's run, once searchCompleted() was called
let state = 'unconfigured';
let remoteConfig = null; // fetched at most once per page load
let active = null; // the loaded run (run.js), once the module is loading
let ended = false; // the run has ended (beacon sent, or no run will start)
let loading = null; // { config, started } of a sampled page load, once it loads the run
let loadFailure = {}; // this page load's load_error beacon, once sent: { pageLoadId, beacon, beaconQueued }
let settle;
const done = new Promise((resolve) => (settle = resolve));
const errors = [];

// Errors stay inside the module: in status() and, once the core is loaded, in the beacon. Never on the console.
function keep(text) {
  if (errors.length < MAX_ERRORS) errors.push(text);
}

function record(where, error) {
  const text = `${where}: ${String((error && error.message) || error)}`;
  keep(text);
  try {
    if (active) active.noteError(text);
  } catch {
    // the core itself failed; status() still has the error
  }
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

function supported() {
  return typeof fetch === 'function' && typeof PerformanceObserver === 'function' &&
    typeof WebAssembly === 'object' && WebAssembly !== null && typeof AbortController === 'function';
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
  try {
    const { config, started } = loading;
    const [url, configId] = loadErrorTarget(config) || [];
    if (!url) return;
    const id = () => crypto.getRandomValues(new Uint32Array(2)).join('');
    const pageLoadId = id();
    // error: the last problem kept, cut by characters (never inside one) to stay within the decoder's 500 bytes.
    const body = JSON.stringify({
      schema: 'h3probe/1', run_id: id(), page_load_id: pageLoadId, config_id: configId, outcome: 'load_error', reason,
      error: [...String(errors[errors.length - 1])].slice(0, 120).join(''), run_ms: Math.round(performance.now() - started),
      sample_rate: config.sampleRate ?? 1, context: { page_origin: location.origin }, samples: [],
    });
    // sendBeacon, or a keepalive fetch where the browser refuses it (as run.js gives the run's beacon).
    if (!navigator.sendBeacon?.(url, body)) {
      fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', mode: 'no-cors' })
        .catch((error) => record('beacon fetch', error));
    }
    loadFailure = { pageLoadId, beacon: body, beaconQueued: true };
  } catch (error) {
    record('load_error beacon', error);
  }
}

// The run is over: whenDone() resolves once the state is final (a run that ends inside start() settles after it). The
// core calls the host's sendBeacon last and notes whether it was queued after it returns: read the status after that.
function end() {
  ended = true;
  if (state !== 'loading') queueMicrotask(() => settle(status()));
}

async function start() {
  if (!options) return 'not_configured';
  if (!supported()) return 'unsupported';
  if (document.visibilityState === 'hidden') return 'hidden';
  const local = options;
  const draw = crypto.getRandomValues(new Uint32Array(1))[0] / 4294967296;
  if (local.enabled === false) return 'disabled';
  if (sampledOut(local, draw)) return 'not_sampled';

  const started = performance.now();
  let merged = local;
  let remoteProblem = '';
  if (local.remoteConfigUrl) {
    remoteConfig ??= fetchRemoteConfig(local.remoteConfigUrl, local.remoteConfigTimeoutMs ?? 2000);
    const remote = await remoteConfig;
    if (remote.error) {
      remoteProblem = `remote config: ${remote.error}`;
    } else {
      merged = { ...local, ...remote.config };
      if (remote.config.enabled === false) return 'disabled';
      if (sampledOut(remote.config, draw)) return 'not_sampled';
      // The page load passed both draws: its probability is the smaller rate.
      if (typeof local.sampleRate === 'number' && typeof merged.sampleRate === 'number') {
        merged.sampleRate = Math.min(local.sampleRate, merged.sampleRate);
      }
    }
  }

  state = 'loading';
  loading = { config: merged, started };
  const { startRun } = await import('./run.js').catch((error) => {
    throw Object.assign(error, { loadError: 'run_import' });
  });
  active = startRun({ record, keep, errors, onEnd: end });
  return active.start({ local, merged, remoteProblem, started });
}

// Call when the user's search has completed (results shown). The first call of a page load starts the run; later
// calls return the same promise. The promise never rejects: it resolves to a status word (docs/embedding.md).
export function searchCompleted() {
  if (!run) {
    run = start().catch((error) => {
      record('start', error);
      if (active) active.close();
      if (error && error.loadError) sendLoadError(error.loadError);
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
  let detail = {};
  try {
    if (active) detail = active.detail();
  } catch (error) {
    record('status', error);
  }
  return { state, errors: errors.slice(), ...detail, ...loadFailure };
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
