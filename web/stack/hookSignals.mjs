// Runs a stack's stop() on SIGINT/SIGTERM (then exits), so an interrupted run leaves no server or namespace behind. The
// signals mean what they mean to the collector (web/server/stopSignals.mjs): npm's forwarded copy of a Ctrl-C does not
// cut the stop short; a later second signal exits at once (the 'exit' handlers still run).
import { onStopSignals, signalExitCode } from '../server/stopSignals.mjs';

/** Wraps an async function so that every call after the first returns the first call's promise. */
export function once(fn) {
  let p;
  return () => (p ??= fn());
}

/** Installs the handlers; returns a function that removes them (kept once a signal has begun the stop). */
export function hookSignals(stop) {
  let signalled = false;
  const hook = onStopSignals({
    stop: (signal) => {
      signalled = true;
      stop().finally(() => process.exit(signalExitCode(signal)));
    },
    force: (signal) => process.exit(signalExitCode(signal)),
  });
  return () => {
    if (!signalled) hook.remove();
  };
}
