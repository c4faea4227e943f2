// The floor's Worker (see h3probe.js): the probe's requests and its Resource Timing observer, without the core: 2
// sequential pre-warm requests to the HTTP/3 origin and 1 to the HTTP/2 origin, 5 parallel to each, and a POST as
// large as a beacon to the no-op endpoint (the collector would refuse it).
const get = (origin) => fetch(`${origin}/noop?floor=${Math.random()}`, { cache: 'no-store', credentials: 'omit' })
  .then((response) => response.arrayBuffer());

self.onmessage = async ({ data: { h2Origin, h3Origin } }) => {
  const entries = [];
  new PerformanceObserver((list) => entries.push(...list.getEntries())).observe({ type: 'resource' });
  await get(h3Origin);
  await get(h3Origin);
  await get(h2Origin);
  self.postMessage({ outcome: 'started', partial: '{}' });
  await Promise.all([0, 1, 2, 3, 4].map(() => get(h2Origin)));
  await Promise.all([0, 1, 2, 3, 4].map(() => get(h3Origin)));
  await fetch(`${h2Origin}/noop?floor=beacon`, {
    method: 'POST', body: 'x'.repeat(3000), keepalive: true, credentials: 'omit', mode: 'no-cors',
  }).catch(() => {});
  // The requests made, as the observer saw them (the benchmark checks that Chromium's reports of each were counted).
  self.postMessage({ end: entries.length });
};
