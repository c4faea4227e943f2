// The part of h3probe that loads only where no Worker can run the core (a CSP without worker-src, an old browser, a
// worker that fails to load, config worker: false): it runs the core here, on the page's main thread, from the same
// worker.js a Worker would have run, with the page's visibility listeners and sendBeacon, and its beacon says why
// (context.worker_fallback). It never throws into the page.

// worker.js, the glue and the .wasm: beside the glue when moduleUrl is set, else beside this file, each written as
// new URL('./…', import.meta.url) so that bundlers emit the three files (worker.js as it is: its import() below is a
// URL the bundlers are told to leave alone, so the core's code is not bundled twice, once for the Worker and once here).
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
 * record(where, error) keeps a problem in the gate's status and sends it on to the core; sendBeacon(url, body) gives a beacon
 * to the browser (by navigator.sendBeacon, else a keepalive fetch); watch(hidden) calls hidden() when the page is hidden
 * and returns a function that stops watching; onEnd() is called once, when the run is over; csp() says whether a CSP was
 * seen blocking the gate's worker, and stops listening for it. Returns the run's handle for the gate.
 */
export function startRun({ record, sendBeacon, watch, onEnd, csp }) {
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
      csp();
    } catch (error) {
      record('end', error);
    }
    onEnd();
  }

  // args: the gate's, with fallback, why its Worker could not run the core (constructor, worker_load, core_load), where
  // it tried one.
  async function start(args) {
    const { moduleUrl } = args.local;
    // Why the run left its Worker: a name from H3PROBE_WORKER_FALLBACK_REASONS in wasm/core/beacon.hpp. A Worker starts
    // only from the page's origin (Chromium and WebKit throw, Firefox fails to load it): named here, so that every
    // engine names it alike.
    let { fallback } = args;
    if (moduleUrl && new URL(moduleUrl).origin !== location.origin) fallback = 'cross_origin';
    if (typeof Worker !== 'function') fallback = 'no_worker';
    if (args.local.worker === false) fallback = 'disabled';
    // A CSP that blocks the worker fires a violation event: before the worker's error event in Chromium and Firefox,
    // after the constructor threw in WebKit (up to ~100 ms later). Read when the core sets its context.
    const workerFallback = () => (csp() && ['constructor', 'worker_load'].includes(fallback) ? 'csp' : fallback);
    const { worker, glue, wasm } = moduleFiles(moduleUrl);
    // The reason for worker.js itself: its own tagging (failed()) cannot run when it does not load.
    const { coreRun } = await import(/* @vite-ignore */ /* webpackIgnore: true */ /* turbopackIgnore: true */ worker).catch((error) => {
      throw Object.assign(error, { loadError: 'worker_import' });
    });
    core = coreRun({ onError: record, sendBeacon, onRunEnded: close });
    // The problems met so far; from now on record() hands them to the core.
    const outcome = await core.start({ ...args, errors: [...args.errors], runContext: 'main', workerFallback,
      files: glue && { glue, wasm } });
    // A page being hidden may never be shown again: the core beacons what was measured, at once.
    if (outcome === 'started' && !closed) unwatch = watch(() => core.pageHidden());
    else close();
    return outcome;
  }

  return {
    start,
    close,
    noteError(text) {
      try {
        if (core) core.noteError(text);
      } catch {
        // the core itself failed; status() still has the error
      }
    },
    detail() {
      try {
        return core ? { ...core.detail(), beaconQueued } : {};
      } catch (error) {
        record('status', error);
        return {};
      }
    },
  };
}
