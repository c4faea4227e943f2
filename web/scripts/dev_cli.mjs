// `npm run report|export -- [options]`: the package's `h3probe report|export` commands with the dev stack's database
// (.h3probe/last-run.sqlite, written by npm start) and HTML path as defaults.
import path from 'node:path';
import { stateDir } from '../stack/paths.mjs';

const [command, ...argv] = process.argv.slice(2);
const { main } = await import(`../cli/${command}.mjs`);
try {
  await main(argv, { db: path.join(stateDir, 'last-run.sqlite'), html: path.join(stateDir, 'report.html') });
} catch (err) {
  console.error(`${command}: ${err.message}`);
  process.exit(2);
}
