// The one way h3probe sends a beacon by fetch: the worker's own way, and the page's where navigator.sendBeacon refuses.
// keepalive, so that it outlives the page as a sendBeacon would; credentials omitted (the collector needs none);
// no-cors, as sendBeacon: a collector on another origin need not answer CORS for it to arrive.
export const sendBeaconByFetch = (url, body) => fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', mode: 'no-cors' });
