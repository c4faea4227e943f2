// h3probe: the module a page embeds. Nothing is fetched before the first completed search; nothing throws into the page.
import { createBrowserHost } from './browserHost.js';

// Keys the loader uses itself; every other key goes to the WASM core, which validates it.
const LOADER_KEYS = ['moduleUrl'];

let options = null;
let run = null; // the one run of this page load, once started
let session = null;
let host = null;
let state = 'unconfigured';
const errors = [];

function record(where, error) {
  // Errors stay inside the module (see status()); the page's console and error handlers never see them.
  if (errors.length < 20) errors.push(`${where}: ${String((error && error.message) || error)}`);
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
    typeof WebAssembly === 'object' && typeof AbortController === 'function';
}

async function start() {
  if (!options) return (state = 'not_configured');
  if (!supported()) return (state = 'unsupported');
  state = 'loading';
  const moduleUrl = options.moduleUrl || new URL('./build/h3probe_browser.mjs', import.meta.url).href;
  const { default: createModule } = await import(moduleUrl);
  const wasm = await createModule({ locateFile: (file) => new URL(file, moduleUrl).href });
  host = createBrowserHost({ onError: record });
  session = new wasm.Session(host);
  host.bind(session);
  const coreConfig = { ...options };
  for (const key of LOADER_KEYS) delete coreConfig[key];
  const problems = session.configure(JSON.stringify(coreConfig));
  if (problems) {
    record('config', problems.replace(/\n/g, '; '));
    return (state = 'invalid_config');
  }
  state = session.searchCompleted();
  return state;
}

// Call when the user's search has completed (results shown). The first call of a page load starts the run; later
// calls return the same promise. The promise never rejects: it resolves to a status word.
export function searchCompleted() {
  if (!run) {
    run = start().catch((error) => {
      record('start', error);
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
