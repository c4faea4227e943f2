// The browser side of the platform port: fetch, Resource Timing lookup, timers and beacons, called by the WASM core.

// Only entries of our own requests are kept while they wait to be claimed; the page's Resource Timing buffer is
// never cleared or resized (other RUM tools on the page read it).
const OWN_ENTRY = 'h3probe=';
// The Server-Timing metric whose description is the protocol the origin saw (the core's kServerTimingProtocol).
export const SERVER_TIMING_PROTOCOL = 'proto';

function randomUnit() {
  try {
    return crypto.getRandomValues(new Uint32Array(1))[0] / 4294967296;
  } catch {
    return Math.random();
  }
}

// A promise resolved in a later task: the page's own work (input, rendering) gets a turn in between.
export function nextTask() {
  const s = globalThis.scheduler;
  if (s && typeof s.yield === 'function') return s.yield();
  if (s && typeof s.postTask === 'function') return s.postTask(() => {});
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// onError(where, error) records a problem; sendBeacon(url, body) gives a beacon to the browser (or to the thread that can) and
// returns whether it was taken; onRunEnded(queued) is called once the run's beacon has been sent: sending it is a run's
// last call to the host whichever way the run ended (see send_beacon in wasm/core/platform.hpp). afterCall() runs
// after each call into the core.
export function createBrowserHost({ onError, sendBeacon, onRunEnded = () => {}, afterCall = () => {} }) {
  let session = null;
  let closed = false;
  const requests = new Map(); // request id -> { controller, reason, timer }
  const timers = new Map(); // timer handle -> setTimeout id
  const entries = resourceEntries();
  const beacon = beaconSender(sendBeacon, onRunEnded, onError);

  function call(method, ...args) {
    if (!session) return;
    try {
      session[method](...args);
      afterCall();
    } catch (error) {
      onError(method, error);
    }
  }

  async function request(id, state, url, timeoutMs, entryWaitMs) {
    // Starting a fetch costs the main thread a few milliseconds (far more on a slow phone): an arm's parallel requests
    // start one per task, back to back, instead of all inside the core's call. A request aborted meanwhile (abortRequest,
    // close) is not sent: fetch() rejects at once on an aborted signal.
    await nextTask();
    const outcome = await fetchOutcome(state, url, timeoutMs, () => entries.entryFor(url, entryWaitMs));
    requests.delete(id);
    // The core's handling (and, for a run's last request, its summary and beacon) in a task of its own.
    await nextTask();
    call('onRequestDone', id, outcome);
  }

  return {
    bind(s) {
      session = s;
    },
    now: () => performance.now(),
    random: randomUnit,
    startRequest(id, url, timeoutMs, entryWaitMs) {
      if (closed) return;
      entries.observe();
      const state = { controller: new AbortController(), reason: '', timer: 0 };
      requests.set(id, state);
      request(id, state, url, timeoutMs, entryWaitMs).catch((error) => onError('startRequest', error));
    },
    abortRequest(id) {
      const state = requests.get(id);
      if (!state) return;
      state.reason = 'aborted';
      state.controller.abort();
    },
    setTimer(handle, delayMs) {
      if (closed) return;
      timers.set(handle, setTimeout(() => {
        timers.delete(handle);
        call('onTimer', handle);
      }, delayMs));
    },
    cancelTimer(handle) {
      clearTimeout(timers.get(handle));
      timers.delete(handle);
    },
    sendBeacon: beacon.send,
    flush: beacon.flush,
    // Stops listening and cancels what is pending: no observer, timer or fetch of this host outlives it. Called when
    // the run has ended or will not start; safe to call more than once.
    close() {
      beacon.flush();
      closed = true;
      session = null;
      for (const id of timers.values()) clearTimeout(id);
      timers.clear();
      abortAll(requests.values());
      entries.close(onError);
    },
  };
}

// One request of the core's, started: fetched with the request's deadline, its body read to the end, then its Resource
// Timing entry (entryFor()); resolves to the outcome the core reads.
async function fetchOutcome(state, url, timeoutMs, entryFor) {
  if (!state.controller.signal.aborted) {
    state.timer = setTimeout(() => {
      state.reason = 'timeout';
      state.controller.abort();
    }, timeoutMs);
  }
  const fetchStarted = performance.now();
  try {
    // No custom header and no credentials: a simple CORS request, so no preflight adds a round trip.
    const response = await fetch(url, {
      cache: 'no-store',
      credentials: 'omit',
      mode: 'cors',
      referrerPolicy: 'no-referrer',
      signal: state.controller.signal,
    });
    await response.arrayBuffer(); // the body read to the end: responseEnd is final only then
    const fetchEnded = performance.now();
    clearTimeout(state.timer);
    const entry = await entryFor();
    const proto = entry && entry.serverTiming && entry.serverTiming.find((t) => t.name == SERVER_TIMING_PROTOCOL);
    // The entry object itself: the core reads its attributes by the names in its own field list. A field left out
    // reads as 0, false, '' or none there (outcome_from_js in wasm/bindings/browser_platform.cpp).
    return {
      status: 'ok', httpStatus: response.status, redirected: response.redirected, fetchStarted, fetchEnded,
      entry, serverProtocol: proto ? proto.description : '',
    };
  } catch (error) {
    clearTimeout(state.timer);
    return {
      status: state.reason || 'network_error', fetchStarted, fetchEnded: performance.now(),
      error: String((error && error.name) || error),
    };
  }
}

// Every request still running aborted (its timer cleared, its reason kept if it had one).
function abortAll(states) {
  for (const state of states) {
    clearTimeout(state.timer);
    state.reason ||= 'aborted';
    try {
      state.controller.abort();
    } catch {
      // nothing left to cancel
    }
  }
}

// The Resource Timing entries of our own requests, by URL. Entries are queued asynchronously after the response ends,
// so reading the buffer right after fetch() misses some; an observer sees every entry even when the buffer is full.
// https://www.w3.org/TR/resource-timing/#sec-privacy
function resourceEntries() {
  let observer = null;
  let closed = false;
  const waiters = new Map(); // url -> resolve(entry)
  const unclaimed = new Map(); // url -> entry seen before anyone asked for it
  return {
    observe() {
      if (observer || closed) return;
      observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          if (!entry.name.includes(OWN_ENTRY)) continue;
          const waiter = waiters.get(entry.name);
          if (waiter) waiter(entry);
          else unclaimed.set(entry.name, entry);
        }
      });
      observer.observe({ type: 'resource' });
    },
    // Resolves to url's entry, or null when none came within waitMs.
    entryFor(url, waitMs) {
      const seen = unclaimed.get(url) || performance.getEntriesByName(url, 'resource').at(-1);
      unclaimed.delete(url);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(url);
          resolve(null);
        }, waitMs);
        // close() calls it with null: the timer goes and the request resolves without an entry.
        waiters.set(url, (entry) => {
          clearTimeout(timer);
          waiters.delete(url);
          resolve(entry);
        });
      });
    },
    // Every waiting request resolved without an entry, and the observer disconnected (its failure told to onError).
    close(onError) {
      closed = true;
      for (const resolve of [...waiters.values()]) resolve(null);
      unclaimed.clear();
      try {
        if (observer) observer.disconnect();
      } catch (error) {
        onError('close', error);
      }
      observer = null;
    },
  };
}

// The beacon goes out in a task of its own: a sendBeacon() call costs the thread about as much as a fetch(), and the
// core has just summarised and encoded the run. flush() (the page being hidden, close()) sends it at once.
// The browser's answer reaches onRunEnded(queued); the core is told the beacon was taken.
function beaconSender(sendBeacon, onRunEnded, onError) {
  let pending = null; // the beacon's sending, until it has gone
  const flush = () => pending && pending();
  return {
    flush,
    send(url, body) {
      pending = () => {
        pending = null;
        let queued = false;
        try {
          queued = sendBeacon(url, body);
        } catch (error) {
          onError('sendBeacon', error);
        }
        try {
          onRunEnded(queued);
        } catch (error) {
          onError('onRunEnded', error);
        }
      };
      nextTask().then(flush);
      return true;
    },
  };
}
