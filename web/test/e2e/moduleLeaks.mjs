// Counts what the probe module leaves running in a page: PerformanceObservers, timers and event listeners it started.

// An init script (runs before any page script): wraps PerformanceObserver, setTimeout and addEventListener so that
// each one the module's code starts is counted until it is disconnected, fires or is cleared, or is removed. "The
// module's code" is any call with a frame served under /h3probe/ (the loader and the WASM glue) on its stack.
export function countModuleLeaks() {
  const fromModule = () => /https?:\/\/[^/]+\/h3probe\//.test(String(new Error().stack));
  const observers = new Set();
  const timers = new Set();
  const listeners = [];
  window.__h3probeLeaks = () => ({ observers: observers.size, timers: timers.size, listeners: listeners.length });

  const NativeObserver = window.PerformanceObserver;
  if (NativeObserver) {
    window.PerformanceObserver = class extends NativeObserver {
      observe(options) {
        if (fromModule()) observers.add(this);
        return super.observe(options);
      }
      disconnect() {
        observers.delete(this);
        return super.disconnect();
      }
    };
  }

  const nativeSetTimeout = window.setTimeout;
  const nativeClearTimeout = window.clearTimeout;
  window.setTimeout = function setTimeout(fn, ms, ...args) {
    const own = fromModule();
    const id = nativeSetTimeout.call(window, (...a) => {
      timers.delete(id);
      if (typeof fn === 'function') fn(...a);
    }, ms, ...args);
    if (own) timers.add(id);
    return id;
  };
  window.clearTimeout = function clearTimeout(id) {
    timers.delete(id);
    return nativeClearTimeout.call(window, id);
  };

  const nativeAdd = EventTarget.prototype.addEventListener;
  const nativeRemove = EventTarget.prototype.removeEventListener;
  EventTarget.prototype.addEventListener = function addEventListener(type, listener, options) {
    if (fromModule()) listeners.push({ target: this, type, listener });
    return nativeAdd.call(this, type, listener, options);
  };
  EventTarget.prototype.removeEventListener = function removeEventListener(type, listener, options) {
    const at = listeners.findIndex((l) => l.target === this && l.type === type && l.listener === listener);
    if (at >= 0) listeners.splice(at, 1);
    return nativeRemove.call(this, type, listener, options);
  };
}

// What countModuleLeaks saw still running: { observers, timers, listeners }.
export function moduleLeaks(page) {
  return page.evaluate(() => window.__h3probeLeaks());
}

export const NO_LEAKS = Object.freeze({ observers: 0, timers: 0, listeners: 0 });
