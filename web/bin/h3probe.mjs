#!/usr/bin/env node
// `h3probe <command> [options]`: the production kit's entry point. Each command lives in web/cli/<command>.mjs and
// exports main(argv); `h3probe <command> --help` prints its options.
const COMMANDS = {
  collector: 'the beacon collector service (POST /beacon, /healthz, /metrics)',
  origins: 'a production Caddyfile for the HTTP/2-only and the HTTP/3 test origins',
  report: 'the report of a collector database: text table, HTML page',
  export: 'a collector database as NDJSON, one run per line',
  migrate: 'a ClickHouse store of an earlier version made this version, in place',
  doctor: 'checks a deployment from outside: TLS, the origins, the module files, the collector',
  trial: 'tries your built page locally: origins, collector and N page loads in headless Chromium, then the report',
};

const [command, ...argv] = process.argv.slice(2);
if (!command || command === '--help' || command === '-h' || !Object.hasOwn(COMMANDS, command)) {
  const lines = Object.entries(COMMANDS).map(([name, what]) => `  ${name.padEnd(10)} ${what}`);
  const out = `usage: h3probe <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nh3probe <command> --help for its options`;
  if (command && command !== '--help' && command !== '-h') {
    console.error(`h3probe: unknown command "${command}"\n\n${out}`);
    process.exit(2);
  }
  console.log(out);
  process.exit(0);
}
try {
  const { main } = await import(`../cli/${command}.mjs`);
  await main(argv);
} catch (err) {
  console.error(`h3probe ${command}: ${err.message}`);
  process.exit(2);
}
