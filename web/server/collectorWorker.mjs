// Entry point of a collector cluster worker (forked by collectorService.mjs with its options in the environment).
import { runWorker } from './collectorService.mjs';

await runWorker(JSON.parse(process.env.H3PROBE_COLLECTOR_OPTIONS));
