// Types of the C++ core compiled for Node (web/dist/node/h3probe_node.cjs, loaded by h3probeNode.mjs). The names below
// come from the core's lists (stored_run.hpp, request_class.hpp, sample.hpp); web/test/unit/nodeModule.test.mjs fails
// when a list and this file disagree.

/** Why a measured request is or is not in its arm; decided once, in the core, and stored with the request. */
/** The report's comparisons (request_class.hpp, H3PROBE_ESTIMANDS). */
export type Estimand = 'as_assigned' | 'h3_worked';

export type RequestClass =
  | 'usable_control' | 'usable_treatment' | 'prewarm' | 'fallback' | 'protocol_unknown' | 'timing_unavailable'
  | 'timeout' | 'network_error' | 'http_error' | 'no_timing_entry' | 'aborted' | 'redirected' | 'cache_hit'
  | 'protocol_mismatch';

/** The durations a report can be made of. */
export type Metric =
  | 'network_ms' | 'queue_ms' | 'dns_ms' | 'connect_ms' | 'tls_ms' | 'request_ms' | 'response_ms' | 'fetch_ms';

/** A run row as the collector stores it (the store adds received_at, region and country). null stands for SQL NULL. */
export interface StoredRun {
  run_id: string;
  page_load_id: string;
  config_id: string;
  module_version: string;
  run_order: string;
  /**
   * 'h2-h3' (the experiment), 'h2-h2' or 'h3-h3' (an A/A test): the protocols of the control and treatment arms; ''
   * for a load_error (no run, in no report's arms mode).
   */
  arms: 'h2-h3' | 'h2-h2' | 'h3-h3' | '';
  /** complete, deadline, stopped, error, or load_error (the gate could not load the run: no requests). */
  outcome: string;
  error: string;
  /** outcome load_error: what did not load (Schema.loadErrorReasons); '' otherwise. */
  reason: string;
  run_ms: number | null;
  sample_rate: number | null;
  page_origin: string;
  effective_type: string;
  rtt_ms: number | null;
  downlink_mbps: number | null;
  save_data: number | null;
  visible_throughout: number | null;
  module_load_ms: number | null;
  timer_resolution_ms: number | null;
  run_context: string;
  /** run_context main: why the run left its Worker (Schema.workerFallbackReasons); '' otherwise. */
  worker_fallback: string;
  /** The module's problems as a JSON array of strings. */
  errors: string;
  /** The arms' response body in bytes (config payloadBytes); 0: the no-op. */
  payload_bytes: number | null;
  /** The report's per-run record: counts by class per arm (layout in stored_run.hpp). */
  arm_counts: Uint8Array;
  arm_network_ms: Uint8Array;
  arm_queue_ms: Uint8Array;
  arm_dns_ms: Uint8Array;
  arm_connect_ms: Uint8Array;
  arm_tls_ms: Uint8Array;
  arm_request_ms: Uint8Array;
  arm_response_ms: Uint8Array;
  arm_fetch_ms: Uint8Array;
  /** The connection-setup view's per-run record: the cold pre-warm samples' outcomes and values (connection_setup.hpp). */
  setup: Uint8Array;
}

/** A request row as the collector stores it. */
export interface StoredRequest {
  run_id: string;
  phase: 'prewarm' | 'control' | 'treatment';
  idx: number;
  origin: 'h2' | 'h3';
  result: string;
  request_class: RequestClass;
  http_status: number;
  protocol: string;
  server_protocol: string;
  reused: number | null;
  network_ms: number | null;
  queue_ms: number | null;
  dns_ms: number | null;
  connect_ms: number | null;
  tls_ms: number | null;
  request_ms: number | null;
  response_ms: number | null;
  start_ms: number | null;
  fetch_ms: number | null;
  /** encodedBodySize: the body's bytes as received (0 for the no-op's 204; 0 in WebKit cross-origin). */
  body_bytes: number | null;
}

export type Decoded = { ok: true; run: StoredRun; requests: StoredRequest[] } | { ok: false; error: string };

export interface ReportOptions {
  method?: 'delta' | 'bootstrap';
  confidence?: number;
  percentiles?: Float64Array;
  sampleSize?: { p: number; mde: number; alpha: number; power: number };
  /** Also compute CDF points at these probabilities. */
  cdfProbabilities?: Float64Array;
  /** inferReport only: the groups after the first are the daily looks (each every run up to its day): mark their
   * stopping line (cs_decided_look, cs_days_needed, ...). buildReport marks its own looks. */
  cumulative?: boolean;
}

/** [lower, upper]; null bounds: no interval (too few runs, or p too extreme for the sample). */
export type Interval = [number | null, number | null];

export interface QuantileRow {
  p: number;
  h2: number | null;
  h3: number | null;
  diff_ms: number | null;
  diff_pct: number | null;
  ci_ms: Interval;
  /** Δ %: Fieller's interval for the ratio, the ratios the Δ ms test does not reject; [null, null] when it has none. */
  ci_pct: Interval;
  /** ci_pct has no finite bounds (the HTTP/2 quantile's own interval reaches 0): the report prints "unbounded". */
  ci_pct_unbounded: boolean;
  ci_h2: Interval;
  ci_h3: Interval;
  /** The cell's one decision: the Δ ms interval is defined and excludes 0 (and so the Δ % interval excludes 0 %). */
  significant: boolean;
  /** The percentile or an arm's interval reaches requests that did not finish: no Δ, interval or decision (an arm's
   *  estimate there is null). */
  unfinished: boolean;
  /** The fewest runs each arm needs for an interval at p (at this confidence); null when none suffices (p 0 or 1). */
  min_runs: number | null;
  /** Estimated correlation of the two arms' quantile estimates (runs shared by both arms); null without an interval. */
  corr: number | null;
  /** The delta method's standard error of Δ ms (kept when the bootstrap replaces the intervals); null without one. */
  se_ms: number | null;
  /** Degrees of freedom of Δ ms's Student t reference (its interval and p-value); null without an interval. */
  df: number | null;
  /** The anytime-valid interval of Δ ms and Δ % (an asymptotic confidence sequence over runs, confidence_sequence.hpp). */
  cs_ms: Interval;
  cs_pct: Interval;
  cs_pct_unbounded: boolean;
  /** cs_ms is defined and excludes 0 (and so cs_pct excludes 0 %). */
  significant_cs: boolean;
  /** Two-sided p-value of Δ ms / se_ms; its Benjamini-Hochberg adjustment over every cell of the report; whether the
   * cell survives at 1 - confidence (multiplicity.hpp). */
  p_value: number | null;
  q_value: number | null;
  discovery: boolean;
}

export interface GroupReport {
  name: string;
  runs: number;
  requests: number;
  /** Excluded requests by class (every class but the usable ones and prewarm), then missing_metric. */
  excluded: Record<Exclude<RequestClass, 'usable_control' | 'usable_treatment' | 'prewarm'> | 'missing_metric', number>;
  fallback: { fallbacks: number; rate: number | null; completed: number };
  /** The classes excluded unequally between the arms (limits.unequalExclusionShare): the arms are then not comparable. */
  unequal: Array<{ class: RequestClass; control: number; treatment: number; control_requests: number; treatment_requests: number }>;
  arms: { h2: { n: number; runs: number }; h3: { n: number; runs: number } };
  analysis: { method: 'delta' | 'bootstrap'; confidence: number; runs_paired: number; rows: QuantileRow[] };
  paired: { n: number; mean: number | null; median: number | null; p10: number | null; p90: number | null;
    ci_mean: Interval; ci_median: Interval } | null;
  order: { n_h2_first: number; n_h3_first: number; mean_h2_first: number | null; mean_h3_first: number | null;
    diff: number | null; ci: Interval; p_value: number | null } | null;
  /** paired: runs_per_arm comes from the Δ's own standard error at the percentile (the pairing counted), else from
   *  the HTTP/2 arm alone as if the arms were apart. */
  sampleSize: { runs_per_arm: number | null; requests_per_run: number | null; design_effect: number | null;
    quantile: number | null; paired: boolean } | null;
  /** Each arm's failed requests (network or HTTP errors) of its requests, and the paired interval of the rates'
   *  difference (failure_rate.hpp); null without a run of the estimand. */
  failures: { runs: number; failed_h2: number; requests_h2: number; failed_h3: number; requests_h3: number;
    rate_h2: number | null; rate_h3: number | null; diff: number | null; ci: Interval; significant: boolean } | null;
  cdf?: { h2: Array<[number, number]>; h3: Array<[number, number]> };
}

export interface Column { name: string; type: 'text' | 'real' | 'flag'; description: string }

export interface Schema {
  runColumns: Column[];
  requestColumns: Column[];
  durations: Array<{ name: string; max: number; metric: boolean; description: string }>;
  metrics: Metric[];
  /** Each class, with its role in the comparison (request_class.hpp): measured, unfinished or failed requests hold a
   *  value in their arm (holdsValue); a fault drops the whole run. */
  requestClasses: Array<{ name: RequestClass; usable: boolean; role: 'measured' | 'unfinished' | 'failed' | 'fault' | 'prewarm';
    holdsValue: boolean; description: string }>;
  /** The comparisons a report makes, each a bit of a run's record (run_records.estimands in ClickHouse). */
  estimands: Array<{ name: Estimand; bit: number; description: string }>;
  /** The value a request that did not finish holds in its arm, above every finished time (limits.maxDurationMs). */
  unfinishedValue: number;
  /** Why a sampled page load could not load the run: the reasons of a beacon with outcome "load_error". */
  loadErrorReasons: Array<{ name: string; description: string }>;
  /** Why a run left its Worker for the page's main thread: the beacon's context.worker_fallback. */
  workerFallbackReasons: Array<{ name: string; description: string }>;
  limits: { maxBeaconBytes: number; maxJsonDepth: number; maxSamples: number; maxErrors: number; maxErrorChars: number;
    minRunsForInterval: number; maxPayloadBytes: number; csTightestRuns: number; maxReportGroups: number;
    /** The bytes of a run record's head before its counts by class (stored_run.hpp); the longest time a finished
     *  request may have. */
    runRecordHeadBytes: number; maxDurationMs: number;
    /** An exclusion whose share of one arm's requests exceeds the other's by more than this, and by at least
     *  unequalExclusionMinRequests requests, makes the arms not comparable (comparability.hpp). */
    unequalExclusionShare: number; unequalExclusionMinRequests: number;
    /** sampleBiases()' thresholds: a share (exceeded) and a count (reached), each (comparability.hpp). */
    failedRunShare: number; failedRunMinRuns: number; loadErrorShare: number; loadErrorMinLoads: number;
    mainThreadShare: number; mainThreadMinRuns: number; fallbackGapShare: number; fallbackGapMinRequests: number };
  /** Every report's defaults (ReportOptions, report.hpp), and the percentiles of the daily series and of the
   *  connection-setup view. */
  reportDefaults: { percentiles: number[]; confidence: number; sampleSize: { p: number; mde: number; alpha: number; power: number };
    seriesPercentiles: number[] };
  runRecordVersion: number;
  /** The Server-Timing metric name whose description is the protocol the origin saw ("proto"). */
  serverTimingProtocol: string;
  /** Server protocol names (as in Server-Timing) → the nextHopProtocol each stands for. */
  serverProtocols: Record<string, string>;
  /** The connection-setup view (wasm/core/connection_setup.hpp): what a run's pre-warm gave for each protocol. */
  setupOutcomes: Array<{ name: SetupOutcome; description: string }>;
  /** The view's metrics; paired: compared within the run (defined the same way for TCP+TLS and QUIC). */
  setupMetrics: Array<{ name: 'connect_ms' | 'network_ms' | 'tls_ms'; paired: boolean; description: string }>;
  /** The format version of run.setup, the cold-setup record (connection_setup.hpp). */
  setupRecordVersion: number;
  /** The first HTTP/3-origin request's verdicts, in the order of their codes (the record's and ClickHouse's column). */
  setupFirstH3: Array<'over_h3' | 'over_other' | 'unknown'>;
  /** The aggregates a warehouse hands inferReport(): their format version and each structure's fields, as the core
   *  declares them (report_aggregates.hpp; the interfaces below are checked against them). */
  aggregates: { version: number; fields: Record<string, string[]> };
}

export type SetupOutcome = 'cold' | 'reused' | 'unverified' | 'absent';

/** One group of the connection-setup view as the core computes it (assembled by web/report/connectionSetup.mjs). */
export interface SetupGroup {
  name: string;
  /** Runs with at least one pre-warm request. */
  runs: number;
  /** Runs with a cold sample of each protocol. */
  paired: number;
  outcomes: { h2: Record<SetupOutcome, number>; h3: Record<SetupOutcome, number> };
  /** The first request to the HTTP/3 origin: over HTTP/3, over another protocol, or failed / not verified. */
  firstH3: { over_h3: number; over_other: number; unknown: number };
  /** Per metric: the arms' inference over the cold samples (h2 = cold HTTP/2, h3 = cold HTTP/3, paired by run). */
  metrics: Record<'connect_ms' | 'network_ms' | 'tls_ms', { analysis: GroupReport['analysis']; paired: GroupReport['paired'] }>;
}

/** A warehouse's aggregates, one round's worth (report_aggregates.hpp declares the fields, web/report/clickhouseAggregates.mjs
 *  computes them): overall, then each group. */
export interface Aggregates {
  /** schema().aggregates.version: the core refuses another. */
  version: number;
  groups: GroupAggregates[];
}

export interface GroupAggregates {
  name: string;
  runs: number;
  requests: number;
  missing_metric: number;
  /** [control, treatment]: each a count per request class, in schema().requestClasses' order. */
  classes: [number[], number[]];
  /** The failure comparison's run sums over the estimand's runs (failure_rate.hpp, FailureSums). */
  failures: FailureSums;
  runs_paired: number;
  /** [h2, h3, the paired within-run differences]. */
  samples: [SampleAggregates, SampleAggregates, SampleAggregates];
  diffs: MomentSums;
  diffs_h2_first: MomentSums;
  diffs_h3_first: MomentSums;
  cross: CrossEntry[];
}

export interface FailureSums {
  runs: number;
  f2: number;
  n2: number;
  f3: number;
  n3: number;
  f2f2: number;
  f2n2: number;
  n2n2: number;
  f3f3: number;
  f3n3: number;
  n3n3: number;
  f2f3: number;
  f2n3: number;
  n2f3: number;
  n2n3: number;
}

export interface SampleAggregates {
  n: number;
  runs: number;
  stats: RankValue[];
  below: BelowEntry[];
}

/** A sample's exact sums (exact_sum.hpp): its count, Σ x in whole units of 2^-1074 and Σ x² in whole units of 2^-2148,
 *  each as hexadecimal digits ('-' first when negative). */
export interface MomentSums {
  n: number;
  sum: string;
  sum_sq: string;
}

/** The value of 0-based rank `rank`, ascending. */
export interface RankValue {
  rank: number;
  value: number;
}

/** At threshold q: Σ S, Σ S², Σ S N, Σ N² over the runs (S: a run's values at or below q, N: its values). */
export interface BelowEntry {
  threshold: number;
  below: number;
  below_sq: number;
  below_size: number;
  size_sq: number;
}

/** At the h2 threshold q2 and the h3 threshold q3: Σ S2 S3, Σ S2 N3, Σ N2 S3, Σ N2 N3 over the paired runs. */
export interface CrossEntry {
  q2: number;
  q3: number;
  s2s3: number;
  s2n3: number;
  n2s3: number;
  n2n3: number;
}

/** What a round still needs, per group (its index in Aggregates.groups) and sample (0 h2, 1 h3, 2 differences). */
export interface Needs {
  ranks: RankNeed[];
  below: BelowNeed[];
  cross: CrossNeed[];
}

export interface RankNeed {
  group: number;
  sample: 0 | 1 | 2;
  rank: number;
}

export interface BelowNeed {
  group: number;
  sample: 0 | 1 | 2;
  threshold: number;
}

export interface CrossNeed {
  group: number;
  q2: number;
  q3: number;
}

/** What one pass over the records makes (report.hpp, ReportRequest, which gives each record's layout). */
export interface ReportRequest {
  /** groups[i] names group i + 1. */
  groups: string[];
  /** The daily series: days[i] names day i + 1; each record then carries its day's number after its group's. */
  days?: string[];
  /** The connection-setup view: each record then ends with the run's cold-setup record (run.setup). */
  setup?: boolean;
  /** The runs whose values the statistics read (default as_assigned); the counts by class are every run's. */
  estimand?: Estimand;
}

export interface H3probeNode {
  /** Validates a beacon (schema h3probe/1), as text or as its UTF-8 bytes (cheaper: one copy), and returns the rows
   *  to store; never throws for bad input. */
  decodeBeacon(text: string | Uint8Array): Decoded;
  /** One pass over the records: per run [group number][day number, with request.days] (each 2 bytes little-endian)
   *  [arm_counts][arm_values of the metric][run.setup, with request.setup], concatenated (or in chunks that concatenate
   *  to that). groups[0] is overall,
   *  then one per name in the order given; days (overall, then each day, at the series' percentiles) and looks (each
   *  day with every earlier one: the daily series' cumulative looks) with request.days, else empty; setup (the
   *  connection-setup view, overall then each group) with request.setup, else null. */
  buildReport(records: Uint8Array | Uint8Array[], request: ReportRequest, options: ReportOptions): { error: string;
    groups: GroupReport[]; days: GroupReport[]; looks: GroupReport[]; setup: SetupGroup[] | null };
  /** One round of the report from a warehouse's aggregates (delta intervals only): while needs is not null, add what it
   *  asks and call again with round + 1 (from 0); error says when a round fails to read or the rounds run out. */
  inferReport(aggregates: Aggregates, options: ReportOptions, round: number): { error: string; needs: Needs | null; groups: GroupReport[] };
  /** What makes a report's sample unlike the users', past the thresholds in schema().limits (comparability.hpp):
   *  runs that failed or timed out, load errors, runs on the main thread, a group whose fallback rate exceeds the
   *  others' (groups: overall first). */
  sampleBiases(facts: { runs: number; failed: number; timedOut: number; loadErrors: number; mainThread: number },
    groups: { name: string; fallbacks: number; completed: number }[]): { kind: 'failed_runs' | 'load_errors' | 'main_thread' |
    'fallback_gap'; n: number; of: number; group?: string; rest_n?: number; rest_of?: number }[];
  /** Exact type-7 quantiles (as numpy.percentile) of values at each p. */
  quantiles(values: Float64Array | number[], ps: Float64Array | number[]): Float64Array;
  schema(): Schema;
  version: string;
}

export function loadH3probeNode(dir?: string): Promise<H3probeNode>;
