// `h3probe collector [--config FILE] [options]`: the beacon collector service, as deployed. Options: collectorOptions.mjs
// (--help lists them with their defaults); a bad option prints why and exits with code 2.
import { OptionsError, collectorHelp, parseCollectorArgs } from '../server/collectorOptions.mjs';
import { runCollectorService } from '../server/collectorService.mjs';

export async function main(argv) {
  let parsed;
  try {
    parsed = parseCollectorArgs(argv);
  } catch (err) {
    if (!(err instanceof OptionsError)) throw err;
    console.error(`h3probe collector: ${err.message}`);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(collectorHelp());
    return;
  }
  if (parsed.options.headersTimeout > parsed.options.requestTimeout) {
    console.error('h3probe collector: headersTimeout must not be longer than requestTimeout');
    process.exit(2);
  }
  stopWhenOrphanedUnderNpm();
  await runCollectorService(parsed.options);
}

// `npx h3probe collector` and `npm run collector` start this process as `sh -c 'h3probe collector ...'` and npm forwards
// SIGTERM and SIGINT to that shell only. dash (Debian's sh) dies of SIGTERM without passing it on, which would leave the
// collector running with no parent and no drain. Under npm, losing the parent therefore counts as one SIGTERM: the
// service's own handler drains and exits.
function stopWhenOrphanedUnderNpm() {
  if (process.env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, 200);
  timer.unref();
}
