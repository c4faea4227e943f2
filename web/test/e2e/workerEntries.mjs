// The probe's Resource Timing entries as its Worker sees them: a dedicated Worker has a performance timeline of its own,
// which the page's performance.getEntries() does not show, and the module ends its worker once the beacon is sent.

// An init script (runs before any page script; also as a string for WebDriver): every Worker the page starts runs its
// module from a wrapper which, just before the module tells the page the run is over ({end}: its beacon sent), posts the
// worker's own h3probe entries (toJSON, plus serverTiming), kept in window.__workerEntries. The module's own message handler
// ignores the extra message. Do not combine with countModuleLeaks: the listener added here is called from the module's
// stack.
export function recordWorkerEntries() {
  window.__workerEntries = [];
  const NativeWorker = window.Worker;
  if (!NativeWorker) return;
  window.Worker = function Worker(url, options) {
    const target = String(new URL(url, location.href));
    // A static import: the module is evaluated first; it looks postMessage up when it calls it.
    const source = `import ${JSON.stringify(target)};
    const post = postMessage.bind(self);
    self.postMessage = (message, ...rest) => {
      if (message && message.end) {
        post({ __workerEntries: performance.getEntriesByType('resource').filter((e) => e.name.includes('h3probe='))
          .map((e) => ({ ...e.toJSON(), serverTiming: (e.serverTiming || []).map((t) => ({ name: t.name, description: t.description })) })) });
      }
      post(message, ...rest);
    };`;
    const worker = new NativeWorker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), options);
    worker.addEventListener('message', (event) => {
      if (event.data && event.data.__workerEntries) window.__workerEntries = event.data.__workerEntries;
    });
    return worker;
  };
}

/** The same init script as a function body for WebDriver's executeScript. */
export const RECORD_WORKER_ENTRIES = `(${recordWorkerEntries})();`;

/** The entries recorded so far (a puppeteer Page, or browsers.mjs's tab interface). */
export function workerEntries(page) {
  return page.evaluate(() => window.__workerEntries);
}

/** network_ms as the beacon encodes it (wasm/core/resource_timing.cpp, to the microsecond): responseEnd - fetchStart. */
export const networkMsOf = (entry) => Math.round((entry.responseEnd - entry.fetchStart) * 1000) / 1000;
