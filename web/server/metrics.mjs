// The collector's metrics: names, help and types in one list; counters kept as plain numbers; rendering in the
// Prometheus text exposition format (version 0.0.4).

const REJECT_REASONS = Object.freeze(['invalid', 'too_large', 'rate_limited', 'origin', 'method', 'store_error']);
// Seconds, from a beacon request's arrival to its answer.
const LATENCY_BUCKETS = Object.freeze([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

export const METRICS = Object.freeze({
  accepted: { name: 'h3probe_beacons_accepted_total', type: 'counter', help: 'Beacons stored (answered 204).' },
  rejected: { name: 'h3probe_beacons_rejected_total', type: 'counter', label: 'reason',
    help: 'Beacon requests refused, by reason: invalid (400), too_large (413), rate_limited (429), origin (403), method (405), store_error (500).' },
  duplicate: { name: 'h3probe_beacons_duplicate_total', type: 'counter',
    help: 'Beacons answered 204 but not stored again: their run_id was already stored (a retry).' },
  latency: { name: 'h3probe_beacon_request_duration_seconds', type: 'histogram',
    help: 'Time from a beacon request (POST or OPTIONS on the beacon path) arriving to its answer.' },
  treatmentCompleted: { name: 'h3probe_treatment_requests_completed_total', type: 'counter',
    help: 'Treatment-arm requests in stored beacons that completed (usable_treatment, fallback or protocol_unknown), the denominator of the fallback rate.' },
  treatmentFallback: { name: 'h3probe_treatment_requests_fallback_total', type: 'counter',
    help: 'Treatment-arm requests in stored beacons that ran over another protocol than the arm asked for (request_class fallback).' },
  loadErrors: { name: 'h3probe_load_errors_total', type: 'counter', label: 'reason',
    help: 'Stored beacons with outcome load_error (a sampled page load could not load the run, its glue or its .wasm), by reason (core schema loadErrorReasons); a reason appears once counted.' },
  workerRuns: { name: 'h3probe_worker_runs_total', type: 'counter',
    help: "Stored runs whose core ran in its Worker (context.run_context worker): with the main-thread runs, the share of runs off the page's main thread." },
  mainThreadRuns: { name: 'h3probe_main_thread_runs_total', type: 'counter', label: 'reason',
    help: "Stored runs whose core ran on the page's main thread (context.run_context main), by why they left the Worker (core schema workerFallbackReasons; unknown from a module older than the reason); a reason appears once counted." },
  connections: { name: 'h3probe_open_connections', type: 'gauge', help: 'Open client connections.' },
});

/** A fresh set of counters (a plain object: a snapshot is the object itself). */
export function createMetrics() {
  return {
    accepted: 0,
    duplicate: 0,
    rejected: Object.fromEntries(REJECT_REASONS.map((r) => [r, 0])),
    latencyBuckets: LATENCY_BUCKETS.map(() => 0),
    latencyCount: 0,
    latencySum: 0,
    treatmentCompleted: 0,
    treatmentFallback: 0,
    loadErrors: {}, // reason → count
    workerRuns: 0,
    mainThreadRuns: {}, // reason → count
    connections: 0,
  };
}

export function observeLatency(m, seconds) {
  m.latencyCount++;
  m.latencySum += seconds;
  // Stored per bucket (not cumulative); rendering accumulates.
  const i = LATENCY_BUCKETS.findIndex((b) => seconds <= b);
  if (i >= 0) m.latencyBuckets[i]++;
}

/**
 * Counts a stored beacon (decoded: the core's decodeBeacon() rows): a load_error by its reason, where its core ran
 * (a run on the main thread by why it left the Worker), and the treatment-arm outcomes of its requests (as the report
 * defines the fallback rate).
 */
export function countStored(m, { run, requests }) {
  if (run.outcome === 'load_error') m.loadErrors[run.reason] = (m.loadErrors[run.reason] ?? 0) + 1;
  if (run.run_context === 'worker') m.workerRuns++;
  if (run.run_context === 'main') {
    const reason = run.worker_fallback || 'unknown';
    m.mainThreadRuns[reason] = (m.mainThreadRuns[reason] ?? 0) + 1;
  }
  for (const r of requests) {
    if (r.phase !== 'treatment') continue;
    const c = r.request_class;
    if (c === 'fallback') { m.treatmentFallback++; m.treatmentCompleted++; }
    else if (c === 'usable_treatment' || c === 'protocol_unknown') m.treatmentCompleted++;
  }
}

const num = (v) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12))));

/** Prometheus text exposition (Content-Type: text/plain; version=0.0.4). */
export function renderMetrics(m) {
  const out = [];
  const head = (d) => out.push(`# HELP ${d.name} ${d.help}`, `# TYPE ${d.name} ${d.type}`);
  head(METRICS.accepted);
  out.push(`${METRICS.accepted.name} ${m.accepted}`);
  head(METRICS.rejected);
  for (const r of REJECT_REASONS) out.push(`${METRICS.rejected.name}{reason="${r}"} ${m.rejected[r]}`);
  head(METRICS.duplicate);
  out.push(`${METRICS.duplicate.name} ${m.duplicate}`);
  head(METRICS.latency);
  let cumulative = 0;
  LATENCY_BUCKETS.forEach((b, i) => {
    cumulative += m.latencyBuckets[i];
    out.push(`${METRICS.latency.name}_bucket{le="${b}"} ${cumulative}`);
  });
  out.push(`${METRICS.latency.name}_bucket{le="+Inf"} ${m.latencyCount}`);
  out.push(`${METRICS.latency.name}_sum ${num(m.latencySum)}`, `${METRICS.latency.name}_count ${m.latencyCount}`);
  for (const k of ['loadErrors', 'mainThreadRuns']) {
    head(METRICS[k]);
    for (const r of Object.keys(m[k]).sort()) out.push(`${METRICS[k].name}{reason="${r}"} ${m[k][r]}`);
  }
  head(METRICS.workerRuns);
  out.push(`${METRICS.workerRuns.name} ${m.workerRuns}`);
  for (const k of ['treatmentCompleted', 'treatmentFallback', 'connections']) {
    head(METRICS[k]);
    out.push(`${METRICS[k].name} ${m[k]}`);
  }
  return `${out.join('\n')}\n`;
}
