// The test page's mock search: shows results, then tells h3probe the search completed (as a real app would).
import { configure, searchCompleted, status, whenDone } from '/h3probe/h3probe.js';

// The experiment config comes from the page URL, so tests and `npm start` can point it at their own origins.
const NUMERIC = new Set(['prewarmH3', 'prewarmH2', 'requestsPerArm', 'requestTimeoutMs', 'entryWaitMs', 'runDeadlineMs',
  'sampleRate', 'remoteConfigTimeoutMs', 'payloadBytes']);
const BOOLEAN = new Set(['enabled', 'worker']);
const config = {};
for (const [key, value] of new URLSearchParams(location.search)) {
  config[key] = NUMERIC.has(key) ? Number(value) : BOOLEAN.has(key) ? value === 'true' : value;
}
configure(config);
window.h3probeStatus = status; // read by the end-to-end tests
window.h3probeDone = whenDone; // awaited by the benchmarks, which must not poll the module

const form = document.getElementById('search');
const results = document.getElementById('results');
const probe = document.getElementById('probe');

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const query = document.getElementById('query').value.trim() || 'everything';
  results.textContent = '';
  // A stand-in for the real search round trip.
  await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 70));
  for (let i = 1; i <= 5; i++) {
    const li = document.createElement('li');
    li.textContent = `${query}: result ${i}`;
    results.append(li);
  }
  document.body.dataset.searches = String(Number(document.body.dataset.searches || 0) + 1);
  const outcome = await searchCompleted();
  probe.textContent = `HTTP/3 probe: ${outcome}`;
});
