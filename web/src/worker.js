// The core's side of a run: loads the WASM module and drives one Session over a browser host (fetch, Resource Timing,
// timers). run.js starts this file as a dedicated module Worker, so that none of it takes the page's main thread; when
// no Worker can run it, run.js imports it and calls coreRun() on the main thread. It never throws into the page.
import { createBrowserHost, nextTask } from './browserHost.js';
import { clientContext } from './clientContext.js';

// Keys the loader uses itself; every other key goes to the WASM core, which validates it.
const LOADER_KEYS = ['moduleUrl', 'remoteConfigUrl', 'remoteConfigTimeoutMs', 'worker'];

function coreConfig(config) {
  const core = { ...config };
  for (const key of LOADER_KEYS) delete core[key];
  return core;
}

// Where the Emscripten glue and its .wasm are: next to this file by default, written so that bundlers that follow
// new URL(..., import.meta.url) (Vite, Rollup, webpack) copy both files; or at moduleUrl (made absolute by run.js),
// with the .wasm beside the glue. A bundle without import.meta.url (an IIFE or a script) must set moduleUrl.
function moduleFiles(moduleUrl) {
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

async function loadCore(moduleUrl) {
  const { glue, wasm } = moduleFiles(moduleUrl);
  // The glue loads while the .wasm is fetched and compiled (streaming), each started in a task of its own: on the main
  // thread a fetch() call alone holds it for milliseconds. The glue then instantiates the compiled module in a later
  // task, and never fetches the .wasm itself.
  // When both fail (a folder missing whole), the glue's reason is given, whichever failed first.
  const [glueLoad, wasmLoad] = await Promise.allSettled([
    import(/* @vite-ignore */ /* webpackIgnore: true */ glue).catch(failed('glue_import')),
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
 * One run of the core. onError(where, error) records a problem; send(url, body) gives the beacon to the browser and
 * returns whether it was taken; onRunEnded(queued) is called once, when the run is over; onPartial({url, body}), if
 * given, receives after each step of the run (progress() in wasm/core/experiment.hpp) the beacon that the page being
 * hidden at that moment would send. Returns { start, pageHidden, noteError, close, detail, loaded }.
 */
export function coreRun({ onError, send, onRunEnded, onPartial }) {
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
    if (body) onPartial({ url: session.beaconUrl(), body });
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
    // left its Worker, read once the core has loaded (a CSP's report of the blocked worker may come late).
    async start({ local, merged, remoteProblem, startedAt, errors, pageOrigin, runContext, workerFallback }) {
      // Each heavier step (the core's start, its config, the client context, the run's start) in its own task, so that
      // none holds the thread long: the first call into each part of the core also compiles it.
      const wasm = await loadCore(local.moduleUrl);
      run.loaded = true;
      await nextTask();
      host = createBrowserHost({ onError, send, onRunEnded: close, afterCall });
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
        if (problems.length) remoteProblem = `remote config: ${problems.join('; ')}`;
      }
      configured = true;
      for (const error of [...errors, ...noted]) session.noteError(error);
      await nextTask();
      const moduleLoadMs = performance.timeOrigin + performance.now() - startedAt;
      session.setContext(clientContext({ moduleLoadMs, pageOrigin, runContext, workerFallback: workerFallback?.() }));
      if (remoteProblem) {
        // One error beacon per page load, to the page's own beacon URL, and only from sampled page loads.
        onError('remote config', remoteProblem);
        session.fail(remoteProblem);
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

// In a dedicated Worker: run.js posts {start} once, and {error: text} for a problem the page met. This side posts
// {error: text} for each problem it meets, {partial} after each step, {toSend} (the beacon, for the page to send:
// sendBeacon exists only there), and {outcome} once the run has started or will not, the run's state with each.
// outcome null: the core could not load here, and the page runs it itself.
function serve() {
  let run = null;
  let sent = false;
  let answered = false;
  // The worker ends itself once the beacon has gone to the page and the outcome is told: the page's main thread then
  // pays nothing for tearing it down.
  const post = (message) => {
    postMessage({ ...message, ...(run ? run.detail() : {}) });
    sent ||= 'toSend' in message;
    answered ||= 'outcome' in message;
    if (sent && answered) close();
  };
  const onError = (where, error) => {
    const text = `${where}: ${String((error && error.message) || error)}`;
    if (run) run.noteError(text);
    post({ error: text });
  };
  addEventListener('message', async ({ data }) => {
    if (data.error && run) run.noteError(data.error);
    if (!data.start || run) return;
    run = coreRun({
      onError,
      send: (url, body) => (post({ toSend: { url, body } }), true),
      onRunEnded() {},
      onPartial: (partial) => post({ partial }),
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
    post({ outcome });
  });
}

if (typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope) serve();
