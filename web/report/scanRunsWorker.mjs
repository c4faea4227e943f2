// Worker-thread entry for readReportData(): opens the database read-only, scans its share of runs, transfers the arrays back.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { scanRuns, transferList } from './scanRuns.mjs';

const { dbPath, ...range } = workerData;
const db = new Database(dbPath, { readonly: true, fileMustExist: true });
try {
  const result = scanRuns(db, range);
  parentPort.postMessage(result, transferList(result));
} finally {
  db.close();
}
