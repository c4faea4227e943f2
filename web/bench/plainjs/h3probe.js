// The anchor of `npm run bench:mainthread`: the same experiment written in plain JavaScript on the page's main thread,
// the simplest way a web team would do it without h3probe. The page's API of the real gate (web/src/h3probe.js) as far
// as the test page uses it; on searchCompleted() it makes 2 pre-warm requests to the HTTP/3 origin and 1 to the HTTP/2
// origin, 5 parallel to each, reads them with a PerformanceObserver, and sends one keepalive POST to the collector.
// Served at /h3probe/ in place of web/dist by the benchmark's "plainjs" arm; not shipped.
let config = {};
let state = 'idle';
let done;
const finished = new Promise((resolve) => { done = resolve; });

export const configure = (c) => { config = c; };
export const status = () => ({ state, runContext: state === 'started' || state === 'done' ? 'main' : '' });
export const whenDone = () => finished;

const get = (origin) => fetch(`${origin}/noop?plain=${Math.random()}`, { cache: 'no-store', credentials: 'omit' })
  .then((response) => response.arrayBuffer());

async function run() {
  const entries = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name.includes('/noop?plain=')) entries.push(e);
  });
  observer.observe({ type: 'resource' });
  await get(config.h3Origin);
  await get(config.h3Origin);
  await get(config.h2Origin);
  const started = entries.length;
  await Promise.all([0, 1, 2, 3, 4].map(() => get(config.h2Origin)));
  await Promise.all([0, 1, 2, 3, 4].map(() => get(config.h3Origin)));
  // Resource Timing entries arrive after their responses: one more task for the last ones.
  await new Promise((resolve) => setTimeout(resolve, 0));
  observer.disconnect();
  const samples = entries.slice(started).map((e) => ({ url: e.name, protocol: e.nextHopProtocol, ms: e.duration }));
  await fetch(config.beaconUrl || '/beacon', {
    method: 'POST', body: JSON.stringify({ plain: true, samples }), keepalive: true, credentials: 'omit', mode: 'no-cors',
  }).catch(() => {});
  state = 'done';
  done({ state, requests: entries.length });
}

export function searchCompleted() {
  if (config.sampleRate === 0) {
    state = 'not_sampled';
    done({ state });
    return Promise.resolve(state);
  }
  state = 'started';
  run().catch(() => { state = 'error'; done({ state }); });
  return Promise.resolve('started');
}
