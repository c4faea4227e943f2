// Facts about the client for the beacon: the Network Information API where present, the page's origin only, timings.

// The smallest step of performance.now() seen in a short busy loop (bounded to ~4 ms): browsers coarsen the clock
// (Firefox to 1 ms), and a report must know the resolution behind its numbers. The smallest of several steps, so
// that a thread preempted mid-loop does not pass for a coarse clock. https://www.w3.org/TR/hr-time-3/#dfn-coarsen-time
function timerResolutionMs() {
  const deadline = performance.now() + 4;
  let last = performance.now();
  let smallest = Infinity;
  let steps = 0;
  while (steps < 8) {
    const now = performance.now();
    if (now !== last) {
      smallest = Math.min(smallest, now - last);
      last = now;
      steps += 1;
    }
    if (now > deadline) break;
  }
  return Number.isFinite(smallest) ? smallest : undefined;
}

const finite = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

// pageOrigin: the host page's origin (a worker's own location is its script's); runContext: "worker" or "main";
// workerFallback: on the main thread, why the run left its Worker.
export function clientContext({ moduleLoadMs, pageOrigin, runContext, workerFallback }) {
  const connection = navigator.connection || {};
  return {
    pageOrigin, // never the path or query: they can hold personal data
    runContext,
    workerFallback,
    effectiveType: typeof connection.effectiveType === 'string' ? connection.effectiveType : '',
    rtt: finite(connection.rtt),
    downlink: finite(connection.downlink),
    saveData: typeof connection.saveData === 'boolean' ? connection.saveData : undefined,
    moduleLoadMs: finite(moduleLoadMs),
    timerResolutionMs: timerResolutionMs(),
  };
}
