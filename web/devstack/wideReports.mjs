// The widest HTML reports a deployment realistically makes (many networks with long AS names, six weeks of daily
// series, an A/A test), written through the collector's store and the report command's code: for the layout test and
// the screenshots in docs/report.md.
import path from 'node:path';
import { makeReport } from '../report/makeReport.mjs';
import { writeSyntheticDb } from './syntheticBeacons.mjs';

// Real AS names among the longest a report meets, with shares in hundredths (syntheticBeacons' networks); the last two
// fall under WIDE_MIN_NETWORK_RUNS and are pooled into "other".
export const WIDE_NETWORKS = Object.freeze([
  { asn: 7922, org: 'Comcast Cable Communications, LLC', share: 0.23 },
  { asn: 4134, org: 'CHINANET-BACKBONE No.31,Jin-rong Street', share: 0.12 },
  { asn: 45609, org: 'Bharti Airtel Ltd. AS for GPRS Service', share: 0.1, udpBlocked: true },
  { asn: 6167, org: 'Cellco Partnership DBA Verizon Wireless', share: 0.1 },
  { asn: 3320, org: 'Deutsche Telekom AG', share: 0.1 },
  { asn: 9808, org: 'China Mobile Communications Group Co., Ltd.', share: 0.08 },
  { asn: 55836, org: 'Reliance Jio Infocomm Limited', share: 0.07 },
  { asn: 12389, org: 'PJSC Rostelecom', share: 0.05 },
  { asn: 2856, org: 'British Telecommunications PLC', share: 0.04 },
  { asn: 64500, org: null, share: 0.04 },
  { asn: null, org: null, share: 0.04 },
  { asn: 64501, org: 'Small Net A', share: 0.02 },
  { asn: 64502, org: 'Small Net B', share: 0.01 },
]);
export const WIDE_MIN_NETWORK_RUNS = 100;
/** Days the runs are spread over: six weeks of daily series. */
export const WIDE_DAYS = 42;

/** The reports writeWideReports() writes: a name, the report options, and which database (the experiment's or the A/A's). */
export const WIDE_REPORTS = Object.freeze([
  { name: 'network', db: 'experiment', options: { by: 'network', minGroupRuns: WIDE_MIN_NETWORK_RUNS } },
  { name: 'region', db: 'experiment', options: { by: 'region' } },
  { name: 'aa-browser-version', db: 'aa', options: { arms: 'h3-h3', by: 'browser_version' } },
]);

/**
 * Writes (or reuses, as writeSyntheticDb does) the two databases in dir and an HTML report per WIDE_REPORTS entry.
 * core: loadH3probeNode(). Resolves to [{ name, htmlPath, report }].
 */
export async function writeWideReports(dir, core, { runs = 4000, days = WIDE_DAYS, seed = 11 } = {}) {
  const dbs = {
    experiment: await writeSyntheticDb(path.join(dir, 'wide-experiment.sqlite'), core, { runs, days, seed, networks: WIDE_NETWORKS }),
    aa: await writeSyntheticDb(path.join(dir, 'wide-aa.sqlite'), core, { runs: Math.round(runs / 4), days, seed, arms: 'h3-h3' }),
  };
  const out = [];
  for (const { name, db: which, options } of WIDE_REPORTS) {
    const htmlPath = path.join(dir, `wide-${name}.html`);
    const { report } = await makeReport(core, { dbPath: dbs[which].path, htmlPath, ...options });
    out.push({ name, htmlPath, report });
  }
  return out;
}
