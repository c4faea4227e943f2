// The browser side of the platform port: fetch, Resource Timing lookup, timers and beacons, called by the WASM core.

// Only entries of our own requests are kept while they wait to be claimed; the page's Resource Timing buffer is
// never cleared or resized (other RUM tools on the page read it).
const OWN_ENTRY = 'h3probe=';

function randomUnit() {
  try {
    return crypto.getRandomValues(new Uint32Array(1))[0] / 4294967296;
  } catch {
    return Math.random();
  }
}

export function createBrowserHost({ onError }) {
  let session = null;
  const requests = new Map(); // request id -> { controller, reason }
  const timers = new Map(); // timer handle -> setTimeout id
  const waiters = new Map(); // url -> resolve(entry)
  const unclaimed = new Map(); // url -> entry seen before anyone asked for it
  let observer = null;

  function call(method, ...args) {
    if (!session) return;
    try {
      session[method](...args);
    } catch (error) {
      onError(method, error);
    }
  }

  // Entries are queued asynchronously after the response ends, so reading the buffer right after fetch() misses
  // some; an observer sees every entry even when the buffer is full. https://www.w3.org/TR/resource-timing/#sec-privacy
  function observe() {
    if (observer) return;
    observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if (!entry.name.includes(OWN_ENTRY)) continue;
        const waiter = waiters.get(entry.name);
        if (waiter) waiter(entry);
        else unclaimed.set(entry.name, entry);
      }
    });
    observer.observe({ type: 'resource' });
  }

  function entryFor(url, waitMs) {
    const seen = unclaimed.get(url) || performance.getEntriesByName(url, 'resource').at(-1);
    unclaimed.delete(url);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(url);
        resolve(null);
      }, waitMs);
      waiters.set(url, (entry) => {
        clearTimeout(timer);
        waiters.delete(url);
        resolve(entry);
      });
    });
  }

  async function request(id, url, timeoutMs, entryWaitMs) {
    const state = { controller: new AbortController(), reason: '' };
    requests.set(id, state);
    const timer = setTimeout(() => {
      state.reason = 'timeout';
      state.controller.abort();
    }, timeoutMs);
    const fetchStarted = performance.now();
    let outcome;
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
      clearTimeout(timer);
      const entry = await entryFor(url, entryWaitMs);
      // The entry object itself: the core reads its attributes by the names in its own field list.
      outcome = {
        status: 'ok', httpStatus: response.status, redirected: response.redirected, fetchStarted, fetchEnded,
        entry, error: '',
      };
    } catch (error) {
      clearTimeout(timer);
      outcome = {
        status: state.reason || 'network_error', httpStatus: 0, redirected: false, fetchStarted,
        fetchEnded: performance.now(), entry: null, error: String((error && error.name) || error),
      };
    }
    requests.delete(id);
    call('onRequestDone', id, outcome);
  }

  return {
    bind(s) {
      session = s;
    },
    now: () => performance.now(),
    random: randomUnit,
    startRequest(id, url, timeoutMs, entryWaitMs) {
      observe();
      request(id, url, timeoutMs, entryWaitMs).catch((error) => onError('startRequest', error));
    },
    abortRequest(id) {
      const state = requests.get(id);
      if (!state) return;
      state.reason = 'aborted';
      state.controller.abort();
    },
    setTimer(handle, delayMs) {
      timers.set(handle, setTimeout(() => {
        timers.delete(handle);
        call('onTimer', handle);
      }, delayMs));
    },
    cancelTimer(handle) {
      clearTimeout(timers.get(handle));
      timers.delete(handle);
    },
    // sendBeacon survives the page unloading; where it refuses (quota, blocked), a keepalive fetch is the fallback.
    sendBeacon(url, body) {
      try {
        if (navigator.sendBeacon && navigator.sendBeacon(url, body)) return true;
      } catch (error) {
        onError('sendBeacon', error);
      }
      try {
        fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', mode: 'no-cors' })
          .catch((error) => onError('beacon fetch', error));
        return true;
      } catch (error) {
        onError('beacon fetch', error);
        return false;
      }
    },
    // Stops listening and cancels what is pending; the core has finished or is being dropped.
    close() {
      for (const handle of timers.keys()) clearTimeout(timers.get(handle));
      timers.clear();
      if (observer) observer.disconnect();
      observer = null;
      session = null;
    },
  };
}
