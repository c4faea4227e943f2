// A decoded beacon as the ClickHouse store's rows (clickhouseSchema.mjs's tables): the run row, the request rows, and
// the report's run_records row laid out from the core's per-run and cold-setup records.
import { metricColumns, setupColumns } from './clickhouseSchema.mjs';
import { networkLabel } from './networkFor.mjs';

/**
 * The rows the collector writes for one decoded beacon ({run, requests} from core.decodeBeacon) and its meta: the run
 * row, the request rows, and the report's run_records row. The run_records row is the core's own per-run record
 * (run.arm_counts and run.arm_<metric>, stored_run.hpp) laid out as columns: the counts by arm and class as the core
 * counted them, and per metric each arm's values (a usable request without a value is NaN in the record: counted as
 * missing, not kept).
 */
export function clickhouseRows(schema, { run, requests }, {
  receivedAt, region = null, country = null, browser = null, browserMajor = null, asn = null, asOrg = null,
}) {
  const runRow = {};
  for (const c of schema.runColumns) runRow[c.name] = run[c.name] ?? (c.type === 'text' ? '' : null);
  Object.assign(runRow, { received_at: receivedAt, region, country, browser, browser_major: browserMajor, asn, as_org: asOrg });
  // The decoder's request objects are the request rows already: the core's request columns and durations, in order.
  return { run: runRow, requests, record: { ...recordRow(schema, run, { receivedAt, region }), network: networkLabel(asn, asOrg) } };
}

// The run_records row from the core's record: arm_counts is [version][order][estimands][control counts by class]
// [treatment counts], one byte each; arm_<metric> is little-endian float64s, the control requests' that hold a value
// (schema.requestClasses' holdsValue) then the treatment's, for a run that counts as assigned (none otherwise).
function recordRow(schema, run, { receivedAt, region }) {
  const classes = schema.requestClasses;
  const counts = run.arm_counts;
  const head = schema.limits.runRecordHeadBytes;
  if (!counts || counts[0] !== schema.runRecordVersion || counts.length !== head + 2 * classes.length) {
    throw new Error(`run ${run.run_id}: its record is of format ${counts?.[0]}, not the core's ${schema.runRecordVersion}`);
  }
  const record = { run_id: run.run_id, received_at: receivedAt, region: region ?? 'unknown', arms: run.arms, run_order: run.run_order,
    payload_bytes: run.payload_bytes || 0, estimands: counts[2] };
  let controlValues = 0;
  classes.forEach((c, k) => {
    record[`control_${c.name}`] = counts[head + k];
    record[`treatment_${c.name}`] = counts[head + classes.length + k];
    if (c.holdsValue) controlValues += counts[head + k];
  });
  Object.assign(record, setupRow(schema, run));
  for (const m of metricColumns(schema)) {
    const blob = run[`arm_${m.metric}`];
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const values = { control: [], treatment: [] };
    let missing = 0;
    for (let i = 0; i < blob.byteLength / 8; i++) {
      const v = view.getFloat64(8 * i, true);
      if (Number.isFinite(v)) values[i < controlValues ? 'control' : 'treatment'].push(v);
      else missing++;
    }
    record[m.control] = values.control;
    record[m.treatment] = values.treatment;
    record[m.missing] = missing;
  }
  return record;
}

// The setupColumns() of a run from its cold-setup record: [version][h2 outcome][h3 outcome][first_h3], then per protocol
// (h2, h3) each setup metric's value as a little-endian float64, NaN for none.
function setupRow(schema, run) {
  const c = setupColumns(schema);
  const blob = run.setup;
  if (blob?.[0] !== schema.setupRecordVersion || blob.length !== 4 + 8 * c.values.length) {
    throw new Error(`run ${run.run_id}: its cold-setup record is of format ${blob?.[0]}, not the core's ${schema.setupRecordVersion}`);
  }
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const row = { [c.outcome.h2]: blob[1], [c.outcome.h3]: blob[2], [c.first]: blob[3] };
  c.values.forEach((v, i) => {
    const x = view.getFloat64(4 + 8 * i, true);
    row[v.name] = Number.isNaN(x) ? [] : [x];
  });
  return row;
}
