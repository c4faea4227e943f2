// Runs a stack's stop() on SIGINT/SIGTERM (then exits), so an interrupted run leaves no server or namespace behind.
import os from 'node:os';

/** Wraps an async function so that every call after the first returns the first call's promise. */
export function once(fn) {
  let p;
  return () => (p ??= fn());
}

/** Installs the handlers; returns a function that removes them. */
export function hookSignals(stop) {
  const onSignal = (signal) => {
    stop().finally(() => process.exit(128 + os.constants.signals[signal]));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
