// The floor of `npm run bench:longtasks`: what any probe that runs in a dedicated Worker costs the page, without the
// core. The page's API of the real gate (web/src/h3probe.js) as far as the test page uses it; on searchCompleted() it
// starts a Worker (worker.js), which makes the probe's requests and posts two messages back, as the module's does
// at the least (the run's outcome with what the page must hold for pagehide, and the end). Served at /h3probe/ in
// place of web/dist by the benchmark's "floor" arm; not shipped.
let config = {};
let state = 'idle';
let done;
const finished = new Promise((resolve) => { done = resolve; });

export const configure = (c) => { config = c; };
export const status = () => ({ state, runContext: state === 'idle' || state === 'not_sampled' ? '' : 'worker' });
export const whenDone = () => finished;

export function searchCompleted() {
  if (config.sampleRate === 0) {
    state = 'not_sampled';
    done({ state });
    return Promise.resolve(state);
  }
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = ({ data }) => {
    if (data.outcome) state = data.outcome;
    if (data.end) {
      worker.terminate();
      done({ state, requests: data.end });
    }
  };
  worker.postMessage({ h2Origin: config.h2Origin, h3Origin: config.h3Origin });
  state = 'started';
  return Promise.resolve(state);
}
