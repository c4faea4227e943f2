// The thread that makes the collector's live reports (collectorReport.mjs): a report reads the whole store, which on the
// collector's own thread would hold up every beacon meanwhile. Each message is one report of the store it was started on.
import { parentPort, workerData } from 'node:worker_threads';
import { loadH3probeNode } from './h3probeNode.mjs';
import { makeReport } from '../report/makeReport.mjs';

const core = await loadH3probeNode();
parentPort.on('message', async ({ id, query }) => {
  try {
    const { text, html, json } = await makeReport(core, { store: workerData.store, ...query, pages: true });
    parentPort.postMessage({ id, text, html, json });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.message ?? err).split('\n')[0] });
  }
});
