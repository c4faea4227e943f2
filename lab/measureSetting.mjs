// Runs N page loads at one link setting and summarises them: the report's quantile table for the setting (the same C++
// as npm run report), the median network time of warm-connection requests per arm (for the fidelity rule), protocols
// seen and the relay's counters.
import { openStore } from '../web/server/store.mjs';
import { makeReport } from '../web/report/makeReport.mjs';
import { aaConfig, experimentUrl } from '../web/launch/pageLoad.mjs';
import { labSearch } from './labSearch.mjs';

export function settingLabel({ rttMs, loss = 0, rateKbps = 0 }, aa = null, payloadBytes = 0) {
  return `${aa ? `A/A ${aa}/${aa}, ` : ''}rtt ${rttMs} ms, loss ${+(loss * 100).toFixed(2)}%`
    + `${rateKbps > 0 ? `, ${+(rateKbps / 1000).toFixed(3)} Mbit/s` : ''}${payloadBytes ? `, ${payloadBytes} B` : ''}`;
}

/**
 * lab: from startLab(); browser: from lab.launchBrowser(); core: loadH3probeNode();
 * link {rttMs, loss, jitterMs, seed}; loads; order ('random', or 'h2-first' as Dropbox); aa: null (the experiment), or 'h2' / 'h3' for an
 * A/A test on the lab's two origins of that kind; pageConfig: more experiment config for the page (e.g. {requestsPerArm: 1},
 * {payloadBytes: 131072}: the report then reads that payload mode);
 * onLoad(i, beacon|null, error|null) for progress. In the result, h2 and h3 name the control and treatment arms.
 */
export async function measureSetting({
  lab, browser, core, link, loads, order = 'random', aa = null, pageConfig = {}, onLoad = () => {},
}) {
  const armsKeys = aaConfig(lab.urls, aa);
  const armsMode = armsKeys.arms ?? 'h2-h3';
  await lab.setLink(link);
  const store = openStore(':memory:', core);
  try {
    // The config id carries the setting into every beacon: letters, digits, '-' and '_' only.
    const payloadBytes = pageConfig.payloadBytes ?? 0;
    const configId = `lab-${aa ? `aa${aa}-` : ''}rtt${link.rttMs}-loss${String(+(link.loss * 100).toFixed(2)).replace('.', '_')}pct` +
      `${link.rateKbps > 0 ? `-rate${link.rateKbps}kbps` : ''}${payloadBytes ? `-${payloadBytes}B` : ''}`;
    const url = experimentUrl({ urls: lab.urls }, { order, configId, ...armsKeys, ...pageConfig });
    const started = Date.now();
    let failed = 0;
    for (let i = 1; i <= loads; i++) {
      try {
        onLoad(i, await labSearch(browser, url, { core, store }), null);
      } catch (err) {
        failed++;
        onLoad(i, null, err);
      }
    }
    const wallMs = Date.now() - started;
    const counters = await lab.setLink(null);

    const { report } = await makeReport(core, { db: store.db, arms: armsMode, payloadBytes });
    const { analysis, arms } = report.groups[0];
    const comparison = { n_h2: arms.h2.n, n_h3: arms.h3.n, rows: analysis.rows, order: report.groups[0].order };
    // Warm: a usable request that rode a connection the pre-warm had opened (connectStart == connectEnd); the fidelity
    // rule in docs/design.md is about these.
    const warmStmt = store.db.prepare(`SELECT network_ms FROM requests WHERE request_class = ? AND reused = 1`).pluck();
    const warm = { h2: warmStmt.all('usable_control'), h3: warmStmt.all('usable_treatment') };
    const median = (v) => (v.length ? core.quantiles(v, [0.5])[0] : null);
    const protocols = store.db.prepare(`SELECT phase, protocol, count(*) AS n FROM requests WHERE phase != 'prewarm'
      GROUP BY phase, protocol ORDER BY phase, protocol`).all();
    return {
      link, aa, arms: armsMode, payloadBytes, label: settingLabel(link, aa, payloadBytes), loads, failed, runs: store.countRuns(), wallMs, comparison, protocols, counters,
      // The report's connection-setup view (null for an A/A setting): the cold connections the pre-warm opened.
      setup: report.connectionSetup,
      warm: Object.fromEntries(['h2', 'h3'].map((arm) => [arm, { n: warm[arm].length, median: median(warm[arm]), values: warm[arm] }])),
    };
  } finally {
    store.close();
  }
}
