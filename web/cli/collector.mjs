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
  await runCollectorService(parsed.options);
}
