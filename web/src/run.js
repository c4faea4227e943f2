// The part of h3probe that loads only where no Worker can run the core (a CSP without worker-src, an old browser, a
// worker that fails to load, config worker: false): it runs the core here, on the page's main thread, from the same
// worker.js a Worker would have run, with the page's visibility listeners and sendBeacon. It never throws into the page.

// worker.js, the glue and the .wasm: beside the glue when moduleUrl is set, else beside this file, each written as
// new URL('./…', import.meta.url) so that bundlers copy the three files (worker.js as it is: a bundler does not follow
// an import() of a URL, so the core's code is not bundled twice, once for the Worker and once here).
function moduleFiles(moduleUrl) {
  if (moduleUrl) return { worker: new URL('worker.js', moduleUrl).href };
  try {
    return {
      worker: new URL('./worker.js', import.meta.url).href,
      glue: new URL('./h3probe_browser.mjs', import.meta.url).href,
      wasm: new URL('./h3probe_browser.wasm', import.meta.url).href,
    };
  } catch {
    throw new Error('no import.meta.url to find worker.js by: set the moduleUrl config key');
  }
}

/**
 * record(where, error) keeps a problem in the gate's status and sends it on to the core; send(url, body) gives a beacon
 * to the browser; watch(hidden) calls hidden() when the page is hidden and returns a function that stops watching;
 * onEnd() is called once, when the run is over. Returns the run's handle for the gate.
 */
export function startRun({ record, send, watch, onEnd }) {
  let core = null;
  let beaconQueued = false;
  let closed = false;
  let unwatch = () => {};

  // The run is over (beacon sent, or no run will start): nothing of the module keeps listening, waiting or running.
  function close(queued) {
    if (queued) beaconQueued = true;
    if (closed) return;
    closed = true;
    try {
      if (core) core.close();
      unwatch();
    } catch (error) {
      record('end', error);
    }
    onEnd();
  }

  async function start(args) {
    const { worker, glue, wasm } = moduleFiles(args.local.moduleUrl);
    // The reason for worker.js itself: its own tagging (failed()) cannot run when it does not load.
    const { coreRun } = await import(/* @vite-ignore */ /* webpackIgnore: true */ worker).catch((error) => {
      throw Object.assign(error, { loadError: 'worker_import' });
    });
    // The beacon by sendBeacon, or by a keepalive fetch where the browser refuses it (its beacons turned off).
    core = coreRun({
      onError: record,
      send: (url, body) => send(url, body) || (fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit',
        mode: 'no-cors' }).catch((error) => record('beacon fetch', error)), true),
      onRunEnded: close,
    });
    // The problems met so far; from now on record() hands them to the core.
    const outcome = await core.start({ ...args, errors: [...args.errors], runContext: 'main', files: glue && { glue, wasm } });
    // A page being hidden may never be shown again: the core beacons what was measured, at once.
    if (outcome === 'started' && !closed) unwatch = watch(() => core.pageHidden());
    else close();
    return outcome;
  }

  return {
    start,
    close,
    noteError(text) {
      if (core) core.noteError(text);
    },
    detail() {
      return core ? { ...core.detail(), beaconQueued } : {};
    },
  };
}
