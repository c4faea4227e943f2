// h3probe: the module a page embeds. Nothing is fetched before the first completed search; nothing throws into the page.
import { createBrowserHost } from './browserHost.js';
import { clientContext } from './clientContext.js';
import { fetchRemoteConfig } from './fetchRemoteConfig.js';

// Keys the loader uses itself; every other key goes to the WASM core, which validates it.
const LOADER_KEYS = ['moduleUrl', 'remoteConfigUrl', 'remoteConfigTimeoutMs'];
const MAX_ERRORS = 20;

let options = null;
let run = null; // the one run of this page load, once started
let session = null;
let host = null; // the browser host of this page load's run, until the run ends
let unwatchVisibility = () => {};
let state = 'unconfigured';
let remoteConfig = null; // fetched at most once per page load
const errors = [];

function record(where, error) {
  // Errors stay inside the module: in status() and, once the core is loaded, in the beacon. Never on the console.
  const text = `${where}: ${String((error && error.message) || error)}`;
  if (errors.length < MAX_ERRORS) errors.push(text);
  try {
    if (session) session.noteError(text);
  } catch {
    // the core itself failed; status() still has the error
  }
}

// Sets the experiment's configuration (see README, "Config keys"). Call before searchCompleted().
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

function coreConfig(config) {
  const core = { ...config };
  for (const key of LOADER_KEYS) delete core[key];
  return core;
}

// The sampling draw is made once per page load, here, before anything is downloaded: a page load that is not sampled
// costs no byte and no request. https://github.com/fastly/insights.js does the same check before any work.
function sampledOut(config, draw) {
  return typeof config.sampleRate === 'number' && !(draw < config.sampleRate);
}

async function loadCore(moduleUrl) {
  const { default: createModule } = await import(moduleUrl);
  // print/printErr: the Emscripten glue would otherwise write its failures (e.g. a CSP without 'wasm-unsafe-eval')
  // to the console of the host page.
  return createModule({ locateFile: (file) => new URL(file, moduleUrl).href, print() {}, printErr() {} });
}

// Returns a function that removes the listeners again.
function watchVisibility() {
  const hidden = () => {
    try {
      if (session) session.pageHidden();
    } catch (error) {
      record('pageHidden', error);
    }
  };
  // A page being hidden may never be shown again: beacon what was measured while the page can still send it.
  const visibility = () => {
    if (document.visibilityState === 'hidden') hidden();
  };
  document.addEventListener('visibilitychange', visibility);
  addEventListener('pagehide', hidden);
  return () => {
    document.removeEventListener('visibilitychange', visibility);
    removeEventListener('pagehide', hidden);
  };
}

// The run is over (beacon sent, or no run will start): nothing of the module keeps listening or waiting. The session
// stays, so status() can still read the run's state and beacon.
function end() {
  try {
    if (host) host.close();
    host = null;
    unwatchVisibility();
    unwatchVisibility = () => {};
  } catch (error) {
    record('end', error);
  }
}

// The core's config problems, one message each; an empty list means accepted.
function configureCore(config) {
  return Array.from(session.configure(coreConfig(config)), String);
}

async function start() {
  if (!options) return (state = 'not_configured');
  if (!supported()) return (state = 'unsupported');
  if (document.visibilityState === 'hidden') {
    run = null; // not started, so a search in a visible tab later on this page load may still run
    return (state = 'hidden');
  }
  const local = options;
  const draw = crypto.getRandomValues(new Uint32Array(1))[0] / 4294967296;
  if (local.enabled === false) return (state = 'disabled');
  if (sampledOut(local, draw)) return (state = 'not_sampled');

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
      if (remote.config.enabled === false) return (state = 'disabled');
      if (sampledOut(remote.config, draw)) return (state = 'not_sampled');
      // The page load passed both draws: its probability is the smaller rate.
      if (typeof local.sampleRate === 'number' && typeof merged.sampleRate === 'number') {
        merged.sampleRate = Math.min(local.sampleRate, merged.sampleRate);
      }
    }
  }

  state = 'loading';
  // Resolved to an absolute URL: the glue's own files (the .wasm) are located relative to it.
  const moduleUrl = local.moduleUrl ? new URL(local.moduleUrl, location.href).href
    : new URL('./build/h3probe_browser.mjs', import.meta.url).href;
  const wasm = await loadCore(moduleUrl);
  host = createBrowserHost({ onError: record, onRunEnded: end });
  session = new wasm.Session(host);
  host.bind(session);
  for (const error of errors) session.noteError(error);

  const localProblems = configureCore(local);
  if (localProblems.length) {
    // The page's own config is wrong: a deploy problem, reported in status(); its beacon URL cannot be trusted.
    record('config', localProblems.join('; '));
    end();
    return (state = 'invalid_config');
  }
  if (!remoteProblem && merged !== local) {
    const problems = configureCore(merged);
    if (problems.length) remoteProblem = `remote config: ${problems.join('; ')}`;
  }
  if (remoteProblem) {
    // One error beacon per page load, to the page's own beacon URL, and only from sampled page loads.
    record('remote config', remoteProblem);
    session.fail(remoteProblem);
    end(); // the beacon has ended it already; this covers a core that sent none
    return (state = 'invalid_remote_config');
  }
  session.setContext(clientContext({ moduleLoadMs: performance.now() - started }));
  unwatchVisibility = watchVisibility();
  const outcome = session.searchCompleted();
  if (outcome !== 'started') end();
  return (state = outcome);
}

// Call when the user's search has completed (results shown). The first call of a page load starts the run; later
// calls return the same promise. The promise never rejects: it resolves to a status word (see README).
export function searchCompleted() {
  if (!run) {
    run = start().catch((error) => {
      record('start', error);
      end();
      return (state = 'error');
    });
  }
  return run;
}

// What the module did so far, for the host page's own diagnostics and for tests.
export function status() {
  let detail = {};
  try {
    if (session) {
      detail = { run: session.state(), pageLoadId: session.pageLoadId(), beacon: session.beaconJson() || null,
        beaconQueued: session.beaconQueued() };
    }
  } catch (error) {
    record('status', error);
  }
  return { state, errors: errors.slice(), ...detail };
}
