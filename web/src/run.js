// The part of h3probe that loads only for a sampled page load, after its search. It starts the core in a dedicated
// Worker (worker.js), so that the core, its fetch() calls and its PerformanceObserver take none of the page's main
// thread; the page keeps what only it can do: the visibility and pagehide listeners and sending the beacon. Where no
// Worker can run (a CSP without worker-src, an old browser, a worker that fails to load, config worker: false) the
// run happens here, on the main thread, and its beacon says why (context.worker_fallback). It never throws into the
// page.

// Gives a beacon to the browser: sendBeacon, or a keepalive fetch where the browser refuses it. Returns whether it was
// taken. Only a page can do this: a Worker has no sendBeacon.
function queueBeacon(url, body, record) {
  try {
    if (navigator.sendBeacon && navigator.sendBeacon(url, body)) return true;
  } catch (error) {
    record('sendBeacon', error);
  }
  try {
    fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', mode: 'no-cors' })
      .catch((error) => record('beacon fetch', error));
    return true;
  } catch (error) {
    record('beacon fetch', error);
    return false;
  }
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

// The worker: beside the run by default, written so that bundlers follow it to a file of its own; beside the glue
// when moduleUrl is set. A Worker must come from the page's own origin: elsewhere the constructor throws or the worker
// fails to load, and the run falls back to the main thread.
function spawnWorker(moduleUrl) {
  return moduleUrl ? new Worker(new URL('worker.js', moduleUrl), { type: 'module' })
    : new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
}

/**
 * record(where, error) keeps a problem in the loader's status and sends it on to the core; keep(text) only keeps it
 * (a problem the core met and noted itself); errors are those recorded before the core loaded; onEnd() is called once,
 * when the run is over. Returns the run's handle for the loader.
 */
export function startRun({ record, keep, errors, onEnd }) {
  let core = null; // the core on the main thread (worker.js's coreRun), when no Worker runs it
  let worker = null;
  let mirror = {}; // the worker's last word on its run: { run, pageLoadId }
  let partial = null; // the worker's latest partial beacon, sent if the page is hidden before the run ends
  let sent = null; // the beacon given to the browser, for a run in the worker
  let beaconQueued = false;
  let answered = false; // the run's outcome is known (started, or why not)
  let closed = false;
  let unwatchVisibility = () => {};
  let fallback = ''; // why the run left its Worker
  let blockedByCsp = false; // a securitypolicyviolation of worker-src was seen since the worker was started
  const onViolation = (event) => {
    if (event.effectiveDirective === 'worker-src') blockedByCsp = true;
  };
  const watchCsp = (on) => document[`${on ? 'add' : 'remove'}EventListener`]('securitypolicyviolation', onViolation);

  // The run is over (beacon sent, or no run will start): nothing of the module keeps listening, waiting or running.
  // The state stays, so status() can still read the run's state and beacon.
  function close(queued) {
    if (queued) beaconQueued = true;
    if (closed) return;
    closed = true;
    try {
      if (worker && sent === null) worker.terminate(); // with its beacon sent, the worker ends itself
      if (core) core.close();
      unwatchVisibility();
      watchCsp(false);
    } catch (error) {
      record('end', error);
    }
    onEnd();
  }

  // A beacon from the worker: the run's own at its end, or the latest partial one when the page is being hidden. The
  // first one sent is the run's beacon; the worker stops with it, or once it has said how the run started (a run that
  // ends before it has started, such as an error beacon, sends first).
  function send(beacon) {
    if (sent !== null) return;
    sent = beacon.body;
    mirror.run = 'done';
    beaconQueued = queueBeacon(beacon.url, beacon.body, record);
    if (answered) close();
  }

  // A page being hidden may never be shown again: beacon what was measured while the page can still send it. The
  // worker's run cannot be asked in time, so its latest partial beacon goes, synchronously.
  function pageHidden() {
    try {
      if (core) core.pageHidden();
      else if (partial && sent === null) {
        send(partial);
        worker.terminate();
      }
    } catch (error) {
      record('pageHidden', error);
    }
  }

  // Resolves to the run's outcome in the worker, or to null when no worker could run the core: why is then in
  // `fallback`, a name from H3PROBE_WORKER_FALLBACK_REASONS in wasm/core/beacon.hpp (the problem itself in the errors).
  function inWorker(args) {
    return new Promise((resolve) => {
      let replied = false;
      const fallBack = (reason, problem) => {
        record('worker', problem);
        if (worker) worker.terminate();
        worker = null;
        fallback = reason;
        resolve(null);
      };
      const { moduleUrl } = args.local;
      // A Worker starts only from the page's origin (Chromium and WebKit throw, Firefox fails to load it): moduleUrl
      // is checked here, so every engine names it alike.
      if (moduleUrl && new URL(moduleUrl).origin !== location.origin) {
        fallBack('cross_origin', 'moduleUrl is on another origin');
        return;
      }
      // A CSP that blocks the worker fires a violation event: before the worker's error event in Chromium and Firefox,
      // after the constructor threw in WebKit (up to ~100 ms later). Read when the main thread's run sets its context.
      watchCsp(true);
      try {
        worker = spawnWorker(moduleUrl);
      } catch (error) {
        fallBack('constructor', error);
        return;
      }
      worker.onmessage = ({ data }) => {
        if (data.error && data.outcome !== null) keep(data.error);
        if (data.run) mirror = { run: data.run, pageLoadId: data.pageLoadId };
        if (data.partial) partial = data.partial;
        if (data.toSend) send(data.toSend);
        if (!('outcome' in data) || replied) return;
        replied = true;
        if (data.outcome === null) fallBack('core_load', data.error);
        else {
          watchCsp(false);
          resolve(data.outcome);
        }
      };
      // A worker that cannot load (not found, not JavaScript, blocked by a CSP) fails here with an empty message: the
      // page runs the core.
      worker.onerror = (event) => {
        event.preventDefault();
        const problem = event.message || 'the worker failed to load';
        if (!replied) {
          replied = true;
          fallBack('worker_load', problem);
        } else {
          record('worker', problem);
          close();
        }
      };
      worker.postMessage({ start: args });
    });
  }

  async function start({ local, merged, remoteProblem, started }) {
    const args = {
      local: local.moduleUrl ? { ...local, moduleUrl: new URL(local.moduleUrl, location.href).href } : local,
      merged, remoteProblem, startedAt: performance.timeOrigin + started, errors: errors.slice(),
      pageOrigin: location.origin, // never the path or query: they can hold personal data
    };
    fallback = local.worker === false ? 'disabled' : typeof Worker !== 'function' ? 'no_worker' : '';
    let outcome = fallback ? null : await inWorker(args);
    if (outcome === null) {
      // The reason for worker.js itself: its own tagging (failed()) cannot run when it does not load.
      const { coreRun } = await import('./worker.js').catch((error) => {
        throw Object.assign(error, { loadError: 'worker_import' });
      });
      core = coreRun({
        onError: record, send: (url, body) => queueBeacon(url, body, record), onRunEnded: close,
      });
      const workerFallback = () => (blockedByCsp && fallback !== 'core_load' ? 'csp' : fallback);
      outcome = await core.start({ ...args, errors: errors.slice(), runContext: 'main', workerFallback });
      watchCsp(false);
    }
    answered = true;
    if (outcome === 'started' && sent === null) unwatchVisibility = watchVisibility(pageHidden);
    else if (outcome !== 'started' || !core) close();
    return outcome;
  }

  return {
    start,
    close,
    noteError(text) {
      if (core) core.noteError(text);
      else if (worker) worker.postMessage({ error: text });
    },
    detail() {
      if (core) return { ...core.detail(), beaconQueued };
      if (!mirror.pageLoadId) return {};
      return { ...mirror, beacon: sent, beaconQueued };
    },
  };
}
