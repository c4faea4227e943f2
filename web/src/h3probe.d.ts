// Types of the module a page embeds (h3probe.js): what a page may call, pass and read back.
// Hand-written; web/test/unit/h3probeTypes.test.mjs fails when an export, a config key or a status word is missing here.

/** The experiment's configuration. Keys the core validates (wasm/core/config.cpp) and three the loader uses itself. */
export interface H3probeConfig {
  /** HTTP/2-only test origin, `https://host[:port]` without a path. Required unless arms is "h3-h3". */
  h2Origin?: string;
  /** HTTP/3-enabled test origin (sends Alt-Svc); must differ from h2Origin. Required unless arms is "h2-h2". */
  h3Origin?: string;
  /**
   * The protocols of the control and treatment arms. "h2-h3" is the experiment. "h2-h2" and "h3-h3" are A/A tests:
   * the control arm asks h2Origin (or h3Origin), the treatment arm aaOrigin, both over the same protocol; every
   * difference the report then shows is the instrument's own. In an A/A test the other protocol's origin may be left
   * out. Default "h2-h3".
   */
  arms?: 'h2-h3' | 'h2-h2' | 'h3-h3';
  /** A/A tests only: the treatment arm's origin, a second origin of the repeated protocol; must differ from h2Origin and h3Origin. */
  aaOrigin?: string;
  /** The no-op endpoint on both origins, a path starting with "/". Default "/noop". */
  noopPath?: string;
  /** A path on the page's origin (not "//host") or an https URL, without space, tab, CR or LF. Default "/beacon". */
  beaconUrl?: string;
  /** Recorded in every beacon, 1 to 64 bytes of UTF-8 (64 ASCII characters, fewer of others). Default "default". */
  configId?: string;
  /** Sequential requests to each HTTP/3 origin an arm asks, before measuring, 0-10. Default 2. */
  prewarmH3?: number;
  /** Sequential requests to each HTTP/2 origin an arm asks, before measuring, 0-10. Default 1. */
  prewarmH2?: number;
  /** Parallel requests per arm, 1-50. Default 5. */
  requestsPerArm?: number;
  /** Per request, 1-120000 ms. Default 5000. */
  requestTimeoutMs?: number;
  /** How long to wait for a request's Resource Timing entry after its body is read, 0-60000 ms. Default 1000. */
  entryWaitMs?: number;
  /** The whole run, 1-600000 ms; past it what was measured is beaconed. Default 20000. */
  runDeadlineMs?: number;
  /** Which arm runs first. Default "h2-first". */
  order?: 'h2-first' | 'h3-first' | 'random';
  /** false turns the probe off (the kill switch). Default true. */
  enabled?: boolean;
  /** Probability that a page load runs at all, 0-1, drawn once per page load. Default 1. */
  sampleRate?: number;
  /** The arms' requests fetch a body of this many bytes (0 to 1048576), pre-warm stays the no-op; default 0, the no-op's 204. */
  payloadBytes?: number;
  /**
   * Where the loader finds the WASM glue (h3probe_browser.mjs; the .wasm and worker.js beside it). Default: next to
   * h3probe.js. A Worker must come from the page's own origin: from another origin the run falls back to the main
   * thread. Loader only.
   */
  moduleUrl?: string;
  /**
   * false: run the core on the page's main thread instead of a dedicated Worker (default true; without a Worker, a CSP
   * that blocks it or a worker that fails to load, the run falls back to the main thread anyway). Loader only.
   */
  worker?: boolean;
  /** A JSON object merged over this config, fetched once per page load. Loader only. */
  remoteConfigUrl?: string;
  /** How long to wait for the remote config, in ms. Default 2000. Loader only. */
  remoteConfigTimeoutMs?: number;
}

/** What searchCompleted() resolves to. */
export type SearchOutcome =
  | 'started'
  | 'already_ran'
  | 'not_sampled'
  | 'disabled'
  | 'hidden'
  | 'invalid_config'
  | 'invalid_remote_config'
  | 'unsupported'
  | 'not_configured'
  | 'error';

/**
 * The loader's state: "unconfigured" and "configured" before the first search, "loading" while the run's code and the
 * WASM core load, then the search's outcome.
 */
export type LoaderState = 'unconfigured' | 'configured' | 'loading' | SearchOutcome;

/**
 * The run's state inside the core: "idle" (configured, not started), "prewarm" (the sequential warm-up requests),
 * "arms" (the parallel control and treatment requests), "done" (its beacon sent).
 */
export type RunState = 'unconfigured' | 'idle' | 'prewarm' | 'arms' | 'done';

/** What the module did so far (status()), and what whenDone() and onResult() deliver once the run is over. */
export interface H3probeStatus {
  /** The loader's state; after the first search, its outcome. */
  state: LoaderState;
  /** The module's own errors (at most 20), each "where: message". Never thrown, never on the console. */
  errors: string[];
  /** The run's state in the core. Present once the WASM core is loaded (a sampled page load after its search). */
  run?: RunState;
  /**
   * The page load's random id, also in the beacon. Present once the core is loaded, or once the gate sent a
   * load_error beacon (state "error": the run, its glue or its .wasm did not load).
   */
  pageLoadId?: string;
  /**
   * The beacon as sent (JSON text, numbers in milliseconds rounded to the microsecond), or null until the run is done.
   * Present once the core is loaded, or the gate's load_error beacon (outcome "load_error" and its reason).
   */
  beacon?: string | null;
  /**
   * Whether the beacon went: the worker's keepalive fetch was answered, or the page handed it to the browser with
   * navigator.sendBeacon, or with a keepalive fetch where the browser refuses that or has none (a page hidden mid-run,
   * a beacon the worker could not send, a run on the main thread, a load error).
   */
  beaconQueued?: boolean;
}

/**
 * Sets the experiment's configuration. Call before searchCompleted(); problems show in status().errors.
 * @example configure({ h2Origin: 'https://h2.example.com', h3Origin: 'https://h3.example.com', sampleRate: 0.01 })
 */
export function configure(config: H3probeConfig): void;

/**
 * Call when the user's search has completed (results shown). The first call of a page load starts the run: the
 * sampling draw, the remote config, then, for a sampled page load, the module's download and the requests. Later calls
 * return the same promise. Never rejects.
 */
export function searchCompleted(): Promise<SearchOutcome>;

/** What the module did so far, for the host page's own diagnostics. */
export function status(): H3probeStatus;

/**
 * Resolves with the final status once this page load's run is over: its beacon sent (state "started", run "done"),
 * or no run at all (not sampled, disabled, unsupported, invalid config, error). A search in a hidden tab is not final.
 * Pending until searchCompleted() is called. Never rejects.
 */
export function whenDone(): Promise<H3probeStatus>;

/**
 * Calls callback once with the final status, when whenDone() resolves. An error thrown by the callback is kept in
 * status().errors, not rethrown.
 */
export function onResult(callback: (result: H3probeStatus) => void): void;
