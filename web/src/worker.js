// The core's side of a run: loads the WASM module and drives one Session over a browser host (fetch, Resource Timing,
// timers). The gate (h3probe.js) starts this file as a dedicated module Worker, so that none of it takes the page's main
// thread; when no Worker can run it, run.js imports it and calls coreRun() on the main thread. It never throws into the
// page.
import { createBrowserHost, nextTask } from './browserHost.js';
import { clientContext } from './clientContext.js';
import { sendBeaconByFetch } from './sendBeaconByFetch.js';

// Keys the loader uses itself; every other key goes to the WASM core, which validates it.
const LOADER_KEYS = ['moduleUrl', 'remoteConfigUrl', 'remoteConfigTimeoutMs', 'worker'];

function coreConfig(config) {
  const core = { ...config };
  for (const key of LOADER_KEYS) delete core[key];
  return core;
}

// Where the Emscripten glue and its .wasm are: as run.js found them (files, on the main thread: this file may then be a
// bundler's copy of it, away from the glue), else next to this file, written so that bundlers that follow
// new URL(..., import.meta.url) (Vite, webpack, Turbopack) emit both files; or at moduleUrl (made absolute by the gate),
// with the .wasm beside the glue. A bundle without import.meta.url (an IIFE or a script) must set moduleUrl.
function moduleFiles(moduleUrl, files) {
  if (files) return files;
  if (moduleUrl) return { glue: moduleUrl, wasm: new URL('h3probe_browser.wasm', moduleUrl).href };
  let glue;
  let wasm;
  try {
    glue = new URL('./h3probe_browser.mjs', import.meta.url).href;
    wasm = new URL('./h3probe_browser.wasm', import.meta.url).href;
  } catch {
    throw new Error('no import.meta.url to find h3probe_browser.mjs by: set the moduleUrl config key');
  }
  return { glue, wasm };
}

// Rethrows a failure to load the core tagged with its reason (error.loadError, a name from H3PROBE_LOAD_ERROR_REASONS
// in wasm/core/beacon.hpp): the gate beacons it when the main thread's attempt fails too.
const failed = (loadError) => (error) => {
  throw Object.assign(error, { loadError });
};

// The .wasm's status and Content-Type are checked before it is compiled, so that the reason names the fault. A CSP
// without 'wasm-unsafe-eval' refuses the compilation; the browsers name the policy in the error.
async function compileWasm(url) {
  const response = await fetch(url).catch(failed('wasm_fetch'));
  const type = response.headers.get('Content-Type');
  if (!response.ok || !/^application\/wasm\s*(;|$)/i.test(type)) {
    failed(response.ok ? 'wasm_type' : 'wasm_fetch')(Error(`the .wasm answered ${response.status} ${type}`));
  }
  return WebAssembly.compileStreaming(response)
    .catch((error) => failed(/CSP|Content.Security|unsafe-eval/i.test(error.message) ? 'csp' : 'wasm_compile')(error));
}

async function loadCore(moduleUrl, files) {
  const { glue, wasm } = moduleFiles(moduleUrl, files);
  // The glue loads while the .wasm is fetched and compiled (streaming), each started in a task of its own: on the main
  // thread a fetch() call alone holds it for milliseconds. The glue then instantiates the compiled module in a later
  // task, and never fetches the .wasm itself.
  // When both fail (a folder missing whole), the glue's reason is given, whichever failed first.
  const [glueLoad, wasmLoad] = await Promise.allSettled([
    import(/* @vite-ignore */ /* webpackIgnore: true */ /* turbopackIgnore: true */ glue).catch(failed('glue_import')),
    nextTask().then(() => compileWasm(wasm))]);
  for (const { status, reason } of [glueLoad, wasmLoad]) if (status === 'rejected') throw reason;
  const { default: createModule } = glueLoad.value;
  const compiled = wasmLoad.value;
  await nextTask();
  // The glue's setup, then in a later task the instance and the core's registration of its classes and types.
  // print/printErr: the Emscripten glue would otherwise write its failures to the console of the host page.
  return new Promise((resolve, reject) => createModule({
    instantiateWasm: (imports, ready) => (nextTask().then(() => WebAssembly.instantiate(compiled, imports)).then(ready)
      .catch(failed('wasm_compile')).catch(reject), {}),
    print() {}, printErr() {},
  }).then(resolve, reject));
}

/**
 * One run of the core. onError(where, error) records a problem; sendBeacon(url, body) gives the beacon to the browser and
 * returns whether it was taken; onRunEnded(queued) is called once, when the run is over; onPartial([url, body]), if
 * given, receives after each step of the run (progress() in wasm/core/experiment.hpp) the beacon that the page being
 * hidden at that moment would send. Returns { start, pageHidden, noteError, close, detail, loaded }.
 */
export function coreRun({ onError, sendBeacon, onRunEnded, onPartial }) {
  let session = null;
  let host = null; // the browser host of this run, until the run ends
  let closed = false;
  let progress = 0;
  let configured = false;
  const noted = []; // problems met before the core had a config (it keeps them from then on)

  function afterCall() {
    if (!onPartial || !session || session.progress() === progress) return;
    progress = session.progress();
    const body = session.partialBeacon();
    if (body) onPartial([session.beaconUrl(), body]);
  }

  // The run is over (beacon sent, or no run will start): nothing of it keeps listening or waiting. The session stays,
  // so detail() can still read the run's state and beacon.
  function close(queued = false) {
    if (closed) return;
    closed = true;
    try {
      if (host) host.close();
      host = null;
    } catch (error) {
      onError('end', error);
    }
    onRunEnded(queued);
  }

  // The core's config problems, one message each; an empty list means accepted.
  function configureCore(config) {
    return Array.from(session.configure(coreConfig(config)), String);
  }

  const run = {
    loaded: false,
    // local, merged: the page's config and the remote one merged over it; remoteProblem: why the remote config is not
    // used ('' if it is); startedAt: performance.timeOrigin + now() at searchCompleted(); errors: problems met before;
    // pageOrigin, runContext: for the client context; workerFallback (main thread only): a function giving why the run
    // left its Worker, read once the core has loaded (a CSP's report of the blocked worker may come late); files:
    // {glue, wasm} where the page found them (moduleFiles).
    async start({ local, merged, remoteProblem, startedAt, errors, pageOrigin, runContext, workerFallback, files }) {
      // Each heavier step (the core's start, its config, the client context, the run's start) in its own task, so that
      // none holds the thread long: the first call into each part of the core also compiles it.
      const wasm = await loadCore(local.moduleUrl, files);
      run.loaded = true;
      await nextTask();
      host = createBrowserHost({ onError, sendBeacon, onRunEnded: close, afterCall });
      session = new wasm.Session(host);
      host.bind(session);

      await nextTask();
      // The core's first call into its config rules also compiles them (WebAssembly is compiled lazily, function by
      // function, and so is the glue's JavaScript): an empty config, rejected and so without effect, pays for that in
      // a task of its own.
      session.configure({});
      await nextTask();
      const localProblems = configureCore(local);
      if (localProblems.length) {
        // The page's own config is wrong: a deploy problem, reported in status(); its beacon URL cannot be trusted.
        onError('config', localProblems.join('; '));
        close();
        return 'invalid_config';
      }
      if (!remoteProblem && merged !== local) {
        const problems = configureCore(merged);
        remoteProblem = problems.join('; ');
      }
      configured = true;
      for (const error of [...errors, ...noted]) session.noteError(error);
      await nextTask();
      const moduleLoadMs = performance.timeOrigin + performance.now() - startedAt;
      session.setContext(clientContext({ moduleLoadMs, pageOrigin, runContext, workerFallback: workerFallback?.() }));
      if (remoteProblem) {
        // One error beacon per page load, to the page's own beacon URL, and only from sampled page loads.
        onError('remote config', remoteProblem);
        session.fail(`remote config: ${remoteProblem}`);
        close(); // the beacon has ended it already; this covers a core that sent none
        return 'invalid_remote_config';
      }
      await nextTask();
      const outcome = session.searchCompleted();
      afterCall();
      if (outcome !== 'started') close();
      return outcome;
    },
    // A page being hidden may never be shown again: beacon what was measured while the page can still send it.
    pageHidden() {
      try {
        if (session) session.pageHidden();
        if (host) host.flush();
      } catch (error) {
        onError('pageHidden', error);
      }
    },
    noteError(text) {
      if (configured) session.noteError(text);
      else noted.push(text);
    },
    close,
    detail() {
      if (!session) return {};
      return { run: session.state(), pageLoadId: session.pageLoadId(), beacon: session.beaconJson() || null };
    },
  };
  return run;
}

// In a dedicated Worker: the gate (h3probe.js) posts {start} once, with the problems met so far. This side posts
// {outcome} once the run has started or will not (outcome null: the core could not load here, and the page runs it
// itself), with the first partial beacon; {partial: [url, body]} after each later step of the run (the beacon the page
// sends if it is hidden before the end: it cannot wait for this thread then); {error: text} for each problem; and
// {end} once the run is over: its beacon sent from here with fetch keepalive (the page's main thread pays nothing for
// it), or, where the browser refuses the fetch, handed to the page to send ({unsent: [url, body]}: navigator.sendBeacon
// exists only there). A run that does not start ends with its outcome. Each message has the run's state, page load id
// and beacon (status).
function serve() {
  let run = null;
  let partial = null; // the first partial beacon, until the outcome carries it
  let sending = null; // the beacon's fetch, once the core has sent it: resolves to what the page is told
  let answered = false;
  let pageOrigin;
  // The worker ends itself with its last message: the page's main thread then pays nothing for tearing it down.
  const post = (message) => {
    postMessage({ ...message, status: run && run.detail() });
    if (message.end) close();
  };
  const onError = (where, error) => {
    const text = `${where}: ${String((error && error.message) || error)}`;
    if (run) run.noteError(text);
    post({ error: text });
  };
  // A beacon URL that is a path is on the page's origin (this worker's own URL may be a blob: or a bundler's).
  const sendBeacon = (url, body) => {
    sending = sendBeaconByFetch(new URL(url, pageOrigin), body)
      .then(() => ({ end: true }), (error) => (onError('beacon fetch', error), { end: true, unsent: [url, body] }));
    if (answered) sending.then(post);
    return true;
  };
  addEventListener('message', async ({ data }) => {
    if (run) return;
    ({ pageOrigin } = data.start);
    run = coreRun({
      onError,
      sendBeacon,
      onRunEnded() {},
      onPartial: (beacon) => (answered ? post({ partial: beacon }) : (partial = beacon)),
    });
    let outcome;
    try {
      outcome = await run.start({ ...data.start, runContext: 'worker' });
    } catch (error) {
      if (!run.loaded) return postMessage({ outcome: null, error: String((error && error.message) || error) });
      onError('start', error);
      run.close();
      outcome = 'error';
    }
    answered = true;
    // A run that did not start is over once the beacon it may have sent (an error beacon) has gone.
    post({ outcome, partial, ...(outcome !== 'started' && { end: true, ...await sending }) });
  });
}

if (typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope) serve();
