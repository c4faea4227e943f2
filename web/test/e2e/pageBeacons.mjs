// Which beacons the page itself sent: with the core in its Worker, the run's beacon goes from the worker (fetch
// keepalive), and the page's navigator.sendBeacon only sends a partial beacon when the page is hidden mid-run, a beacon
// the worker could not send, or a load_error beacon. The tests tell the paths apart by this record.

// An init script (runs before any page script; also as a string for WebDriver): each navigator.sendBeacon call of the
// page, kept as the run_id of its beacon in window.__pageBeacons.
export function recordPageBeacons() {
  window.__pageBeacons = [];
  const send = navigator.sendBeacon.bind(navigator);
  navigator.sendBeacon = (url, body) => {
    window.__pageBeacons.push(String(body).match(/"run_id":"([^"]*)"/)?.[1] ?? '?');
    return send(url, body);
  };
}

/** The same init script as a function body for WebDriver's executeScript. */
export const RECORD_PAGE_BEACONS = `(${recordPageBeacons})();`;
