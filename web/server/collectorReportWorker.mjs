// The thread of one live report (collectorReport.mjs): the report reads the whole store, which on the collector's own
// thread would hold up every beacon meanwhile.
import { parentPort, workerData } from 'node:worker_threads';
import { loadH3probeNode } from './h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';

try {
  const { text, html, json } = await makeReport(await loadH3probeNode(), { store: workerData.store, ...workerData.query, pages: true });
  parentPort.postMessage({ text, html, json });
} catch (err) {
  parentPort.postMessage({ error: String(err?.message ?? err).split('\n')[0] });
}
