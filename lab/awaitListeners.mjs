// Waits for a Caddy that runs in a network namespace, which this process cannot reach: awaitListeners() runs this file
// inside the namespace (ip netns exec NS node awaitListeners.mjs JSON), where it runs the stack's own waitListening()
// and exits 0 once every listener answers, 1 at the deadline. Used by the lab and the kit test.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitListening } from '../web/stack/caddy.mjs';

const SELF = fileURLToPath(import.meta.url);

/** ready: {sites: [{host, port, path}], udpPorts, certPath}, as startCaddy's waitReady gets it; address: in namespace ns. */
export async function awaitListeners({ ns, address, ready, timeoutMs }) {
  try {
    await promisify(execFile)('ip', ['netns', 'exec', ns, process.execPath, SELF, JSON.stringify({ ...ready, address, timeoutMs })],
      { timeout: timeoutMs + 5000 });
  } catch {
    throw new Error(`caddy in namespace ${ns} did not answer on ${address} within ${timeoutMs} ms`);
  }
}

if (process.argv[1] === SELF) {
  const spec = JSON.parse(process.argv[2]);
  waitListening(spec, spec.timeoutMs).then(() => process.exit(0), () => process.exit(1));
}
