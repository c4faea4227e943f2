// What SIGTERM and SIGINT mean to a long-running h3probe process (the collector; the dev stack's commands): the first
// one stops it gracefully, a later one forces it. A copy of the first signal within COPY_MS is neither: a signal sent
// to a whole process group (Ctrl-C in a terminal, a supervisor's stop) reaches npm and this process together, and npm
// (under `npm run`, `npx`) forwards its copy to its child, so one stop can arrive twice within milliseconds.
import os from 'node:os';

/** How long after the first signal the same signal again is taken for a forwarded copy of it. */
export const COPY_MS = 1000;
const SIGNALS = ['SIGTERM', 'SIGINT'];

/**
 * stop(why): called once, for the first signal or stopNow(); force(signal): for any later signal but a copy of the
 * first (or, after stopNow(), the first signal within copyMs). onCopy(signal): told of each copy ignored. Returns { stopNow(why), remove() }:
 * stopNow starts the graceful stop as a first signal would (a no-op once it has begun) and never forces.
 */
export function onStopSignals({ stop, force, onCopy = () => {}, copyMs = COPY_MS }) {
  let first = null;
  const begin = (why, signal) => {
    if (first) return false;
    first = { signal, at: performance.now() };
    stop(why);
    return true;
  };
  const handler = (signal) => {
    if (begin(signal, signal)) return;
    // After stopNow() (no signal yet), the first signal that soon is the one that caused it: the parent's loss and the
    // signal to the group come together, in either order.
    if (performance.now() - first.at < copyMs && (first.signal === null || first.signal === signal)) {
      first.signal = signal;
      onCopy(signal);
    } else {
      force(signal);
    }
  };
  for (const s of SIGNALS) process.on(s, handler);
  return {
    stopNow: (why) => { begin(why, null); },
    remove: () => { for (const s of SIGNALS) process.off(s, handler); },
  };
}

/** The exit code of a process killed by signal: 128 + its number, as a shell reports it. */
export const signalExitCode = (signal) => 128 + (os.constants.signals[signal] ?? 0);
