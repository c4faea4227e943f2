// The part of h3probe that loads only for a sampled page load, after its search: the WASM core, the browser host it
// drives, the client context. h3probe.js imports it lazily; it never throws into the page.
import { createBrowserHost, nextTask } from './browserHost.js';
import { clientContext } from './clientContext.js';

// Keys the loader uses itself; every other key goes to the WASM core, which validates it.
const LOADER_KEYS = ['moduleUrl', 'remoteConfigUrl', 'remoteConfigTimeoutMs'];

function coreConfig(config) {
  const core = { ...config };
  for (const key of LOADER_KEYS) delete core[key];
  return core;
}

// Where the Emscripten glue and its .wasm are: next to this file by default, written so that bundlers that follow
// new URL(..., import.meta.url) (Vite, Rollup, webpack) copy both files; or wherever config.moduleUrl says, with the
// .wasm beside the glue. A bundle without import.meta.url (an IIFE or a script) must set moduleUrl.
function moduleFiles(moduleUrl) {
  if (moduleUrl) {
    const glue = new URL(moduleUrl, location.href).href;
    return { glue, wasm: new URL('h3probe_browser.wasm', glue).href };
  }
  let glue;
  let wasm;
  try {
    glue = new URL('./h3probe_browser.mjs', import.meta.url).href;
    wasm = new URL('./h3probe_browser.wasm', import.meta.url).href;
  } catch {
    throw new Error('cannot locate h3probe_browser.mjs from this bundle (no import.meta.url): set the moduleUrl config key');
  }
  return { glue, wasm };
}

async function loadCore(moduleUrl) {
  const { glue, wasm } = moduleFiles(moduleUrl);
  // The glue loads while the .wasm is fetched and compiled (streaming, off the main thread), each started in a task of
  // its own: a fetch() call alone holds the main thread for milliseconds. The glue then instantiates the compiled
  // module in a later task, and never fetches the .wasm itself.
  const [{ default: createModule }, compiled] = await Promise.all([import(/* @vite-ignore */ /* webpackIgnore: true */ glue),
    nextTask().then(() => WebAssembly.compileStreaming(fetch(wasm)))]);
  await nextTask();
  // The glue's setup, then in a later task the instance and the core's registration of its classes and types.
  // print/printErr: the Emscripten glue would otherwise write its failures to the console of the host page.
  return new Promise((resolve, reject) => createModule({
    instantiateWasm: (imports, ready) => (nextTask().then(() => WebAssembly.instantiate(compiled, imports)).then(ready)
      .catch(reject), {}),
    print() {}, printErr() {},
  }).then(resolve, reject));
}

// Returns a function that removes the listeners again.
function watchVisibility(pageHidden) {
  const visibility = () => {
    if (document.visibilityState === 'hidden') pageHidden();
  };
  document.addEventListener('visibilitychange', visibility);
  addEventListener('pagehide', pageHidden);
  return () => {
    document.removeEventListener('visibilitychange', visibility);
    removeEventListener('pagehide', pageHidden);
  };
}

/**
 * record(where, error) keeps a problem in the loader's status; errors are those recorded before the core loaded;
 * onEnd() is called once, when the run is over. Returns the run's handle for the loader.
 */
export function startRun({ record, errors, onEnd }) {
  let session = null;
  let host = null; // the browser host of this page load's run, until the run ends
  let unwatchVisibility = () => {};
  let closed = false;
  let beaconQueued = false;

  // The run is over (beacon sent, or no run will start): nothing of the module keeps listening or waiting. The session
  // stays, so status() can still read the run's state and beacon.
  function close(queued) {
    if (queued) beaconQueued = true; // from the host, once it gave the beacon to the browser
    if (closed) return;
    closed = true;
    try {
      if (host) host.close();
      host = null;
      unwatchVisibility();
    } catch (error) {
      record('end', error);
    }
    onEnd();
  }

  // A page being hidden may never be shown again: beacon what was measured while the page can still send it.
  function pageHidden() {
    try {
      if (session) session.pageHidden();
      if (host) host.flush();
    } catch (error) {
      record('pageHidden', error);
    }
  }

  // The core's config problems, one message each; an empty list means accepted.
  function configureCore(config) {
    return Array.from(session.configure(coreConfig(config)), String);
  }

  async function start({ local, merged, remoteProblem, started }) {
    // Each heavier step (the core's start, its config, the client context, the run's start) in its own task, so that
    // none holds the main thread long: the first call into each part of the core also compiles it.
    const wasm = await loadCore(local.moduleUrl);
    await nextTask();
    host = createBrowserHost({ onError: record, onRunEnded: close });
    session = new wasm.Session(host);
    host.bind(session);
    for (const error of errors) session.noteError(error);

    await nextTask();
    // The core's first call into its config rules also compiles them (WebAssembly is compiled lazily, function by
    // function, and so is the glue's JavaScript): an empty config, rejected and so without effect, pays for that in a
    // task of its own.
    session.configure({});
    await nextTask();
    const localProblems = configureCore(local);
    if (localProblems.length) {
      // The page's own config is wrong: a deploy problem, reported in status(); its beacon URL cannot be trusted.
      record('config', localProblems.join('; '));
      close();
      return 'invalid_config';
    }
    if (!remoteProblem && merged !== local) {
      const problems = configureCore(merged);
      if (problems.length) remoteProblem = `remote config: ${problems.join('; ')}`;
    }
    if (remoteProblem) {
      // One error beacon per page load, to the page's own beacon URL, and only from sampled page loads.
      record('remote config', remoteProblem);
      session.fail(remoteProblem);
      close(); // the beacon has ended it already; this covers a core that sent none
      return 'invalid_remote_config';
    }
    await nextTask();
    session.setContext(clientContext({ moduleLoadMs: performance.now() - started }));
    await nextTask();
    unwatchVisibility = watchVisibility(pageHidden);
    const outcome = session.searchCompleted();
    if (outcome !== 'started') close();
    return outcome;
  }

  return {
    start,
    close,
    noteError(text) {
      if (session) session.noteError(text);
    },
    detail() {
      if (!session) return {};
      return { run: session.state(), pageLoadId: session.pageLoadId(), beacon: session.beaconJson() || null,
        beaconQueued };
    },
  };
}
