// The collector service's options, in one table: `h3probe collector` parses its flags from it, validates a --config file
// against it, prints --help from it, and docs/collector.md's options table is checked against it by a unit test.
import fs from 'node:fs';
import { DEFAULT_COUNTRY_HEADERS, parseTrustedProxies } from './clientLocator.mjs';
import { DEFAULT_DB } from './store.mjs';
import { redactStoreUrl } from './clickhouseConnection.mjs';
import { COPY_MS } from './stopSignals.mjs';

/** A configuration mistake (unknown key, bad value, unreadable file): the CLI prints it and exits with code 2. */
export class OptionsError extends Error {}

const int = (min, max) => (v) => Number.isInteger(v) && v >= min && v <= max ? null : `an integer from ${min} to ${max}`;
const num = (min, max) => (v) => Number.isFinite(v) && v >= min && v <= max ? null : `a number from ${min} to ${max}`;

/**
 * name: the config-file key and the flag (--kebab-case of it); type: string | int | number | list (a JSON array of
 * strings or a comma-separated flag value); check(value) → null or what a valid value is.
 */
export const COLLECTOR_OPTIONS = Object.freeze([
  { name: 'host', type: 'string', default: '127.0.0.1', help: 'address to listen on (0.0.0.0 or :: for all interfaces)' },
  { name: 'port', type: 'int', default: 8787, check: int(0, 65535), help: 'TCP port (0: any free port)' },
  { name: 'path', type: 'string', default: '/beacon', check: (v) => (/^\/[\w\-./]*$/.test(v) ? null : 'a URL path starting with /'),
    help: 'URL path that takes beacons (POST; OPTIONS for CORS preflight)' },
  { name: 'db', type: 'string', default: DEFAULT_DB, check: (v) => (v ? null : 'a file path'),
    help: 'SQLite database file (WAL mode; created when missing)' },
  { name: 'store', type: 'string', default: '',
    check: (v) => (v === '' || /^sqlite:.+/.test(v) || /^clickhouse:\/\/[^/]+\/\w*/.test(v) ? null : 'sqlite:PATH or clickhouse://[USER@]HOST[:PORT]/DATABASE[?secure=1]'),
    help: 'where beacons go: sqlite:PATH or clickhouse://[USER@]HOST[:PORT]/DATABASE[?secure=1] (HTTP port; password from $H3PROBE_CLICKHOUSE_PASSWORD or ?password_file=FILE; beacons are acknowledged from a local log, ?log=FILE, and inserted in batches once a second); empty: --db' },
  { name: 'allowedOrigins', type: 'list', default: ['*'],
    check: (v) => (v.every((o) => o === '*' || /^https?:\/\/[^/\s]+$/.test(o)) ? null : '* or origins like https://www.example.com'),
    help: 'page origins allowed to send beacons (CORS); * allows any' },
  { name: 'trustedProxies', type: 'list', default: [],
    check: (v) => { try { parseTrustedProxies(v); return null; } catch { return 'IP addresses or CIDRs'; } },
    help: 'proxies (IPs/CIDRs) whose X-Forwarded-For and country headers are believed; loopback always is' },
  { name: 'countryHeaders', type: 'list', default: [...DEFAULT_COUNTRY_HEADERS],
    check: (v) => (v.every((h) => /^[\w-]+$/.test(h)) ? null : 'header names'),
    help: 'headers carrying the client country code, set by a trusted proxy; first present wins' },
  { name: 'countryDb', type: 'string', default: '', help: 'IP-to-country .mmdb file (empty: the bundled IPtoASN database)' },
  { name: 'asnDb', type: 'string', default: '',
    help: 'directory of IP-to-AS tables in the @ip-location-db/asn format, or off (empty: the bundled ones)' },
  { name: 'rateLimit', type: 'number', default: 60, check: num(0, 1e9),
    help: 'beacons per minute per client network (IPv4 /24, IPv6 /48); 0 turns the limit off' },
  { name: 'rateBurst', type: 'int', default: 120, check: int(1, 1e9), help: 'beacons a client network may send at once before the rate applies' },
  { name: 'maxConnections', type: 'int', default: 1024, check: int(1, 1e7),
    help: 'open connections; more are closed as they are accepted' },
  { name: 'headersTimeout', type: 'number', default: 10, check: num(0.1, 600),
    help: 'seconds a client has from connecting to send complete request headers' },
  { name: 'requestTimeout', type: 'number', default: 10, check: num(0.1, 600), help: 'seconds a client has to send a whole request' },
  { name: 'keepAliveTimeout', type: 'number', default: 5, check: num(0.1, 600), help: 'seconds an idle keep-alive connection is kept' },
  { name: 'drainTimeout', type: 'number', default: 10, check: num(0.1, 3600),
    help: 'seconds SIGTERM waits for in-flight beacons before forcing exit (code 1)' },
  { name: 'reportTokenFile', type: 'string', default: '',
    help: 'file of the token GET /report, /report.json and /report.txt need; empty: no such routes' },
  { name: 'reportMaxAge', type: 'number', default: 300, check: num(1, 86400),
    help: 'seconds a report is served again before it is made anew' },
  { name: 'reportRateLimit', type: 'number', default: 12, check: num(0, 1e6),
    help: 'report requests per minute per client network, loopback included; 0: no limit' },
  { name: 'reportRateBurst', type: 'int', default: 10, check: int(1, 1e6), help: 'report requests a network may send at once' },
]);

const BY_NAME = new Map(COLLECTOR_OPTIONS.map((o) => [o.name, o]));
const flagOf = (name) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
const BY_FLAG = new Map(COLLECTOR_OPTIONS.map((o) => [flagOf(o.name), o]));

export function defaultOptions() {
  return Object.fromEntries(COLLECTOR_OPTIONS.map((o) => [o.name, structuredClone(o.default)]));
}

function showDefault(o) {
  if (o.type === 'list') return o.default.length ? o.default.join(',') : '(none)';
  return o.default === '' ? '(empty)' : String(o.default);
}

/** The --help text: usage and every option with its default. */
export function collectorHelp() {
  const rows = COLLECTOR_OPTIONS.map((o) => [`${flagOf(o.name)} ${o.type === 'list' ? 'A,B' : o.type.toUpperCase()}`, o.help,
    showDefault(o)]);
  const width = Math.max(...rows.map((r) => r[0].length)) + 2;
  return [
    'usage: h3probe collector [--config FILE] [options]',
    '',
    'The beacon collector service: POST <path> stores beacons; GET /healthz; GET /metrics (Prometheus); GET /report',
    '(also .json, .txt; ?by=&since=&payload-bytes=) behind the token of --report-token-file.',
    'Options come from the defaults, then the JSON --config file (keys as below in camelCase), then flags (flags win).',
    '',
    `  ${'--config FILE'.padEnd(width)}JSON file of options, e.g. {"port": 8787, "allowedOrigins": ["https://www.example.com"]}`,
    `  ${'--help'.padEnd(width)}this text`,
    ...rows.map(([flag, help, def]) => `  ${flag.padEnd(width)}${help} [default: ${def}]`),
    '',
    `Errors in options exit with code 2. SIGTERM/SIGINT drain in-flight beacons, then exit 0 (1 when acknowledged beacons
are left in the ClickHouse log); the same signal again within ${COPY_MS / 1000} s is npm's forwarded copy and ignored, a later one forces exit.`,
  ].join('\n');
}

/** The docs/collector.md options table (a unit test checks that the document contains exactly this). */
export function optionsMarkdownTable() {
  const lines = ['| config key | flag | default | meaning |', '| --- | --- | --- | --- |'];
  for (const o of COLLECTOR_OPTIONS) {
    lines.push(`| \`${o.name}\` | \`${flagOf(o.name)}\` | \`${showDefault(o)}\` | ${o.help} |`);
  }
  return lines.join('\n');
}

// A flag's text → the option's type; a config value is checked as it is (JSON types), except that a list may be a string.
function fromFlag(o, text) {
  if (o.type === 'int' || o.type === 'number') {
    const v = text.trim() === '' ? NaN : Number(text);
    return Number.isNaN(v) ? text : v;
  }
  if (o.type === 'list') return text.split(',').map((s) => s.trim()).filter(Boolean);
  return text;
}

function checkValue(o, value, where) {
  let v = value;
  if (o.type === 'list' && typeof v === 'string') v = v.split(',').map((s) => s.trim()).filter(Boolean);
  const typeOk = o.type === 'list' ? Array.isArray(v) && v.every((s) => typeof s === 'string')
    : o.type === 'string' ? typeof v === 'string' : typeof v === 'number';
  const problem = typeOk ? o.check?.(v) ?? null : { list: 'a list of strings', string: 'a string' }[o.type] ?? 'a number';
  const shown = o.name === 'store' ? redactStoreUrl(value) : value;
  if (problem) throw new OptionsError(`${where}: ${JSON.stringify(shown)} is not valid for ${o.name}: expected ${problem}`);
  return v;
}

/** Validates a config object (a --config file's JSON): unknown keys and bad values throw OptionsError. */
function validateConfig(config, where = 'config') {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new OptionsError(`${where}: expected a JSON object`);
  const out = {};
  for (const [key, value] of Object.entries(config)) {
    const o = BY_NAME.get(key);
    if (!o) throw new OptionsError(`${where}: unknown option "${key}" (known: ${[...BY_NAME.keys()].join(', ')})`);
    out[key] = checkValue(o, value, where);
  }
  return out;
}

/**
 * argv → {help: true} or {options}: the defaults, overridden by the --config file, overridden by flags. Throws OptionsError.
 * Flags are --name VALUE or --name=VALUE.
 */
export function parseCollectorArgs(argv, { readFile = (f) => fs.readFileSync(f, 'utf8') } = {}) {
  const flags = {};
  let configFile = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return { help: true };
    const m = /^(--[a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new OptionsError(`unexpected argument "${arg}" (see --help)`);
    const [, flag, inline] = m;
    const value = inline ?? argv[++i];
    if (value === undefined) throw new OptionsError(`${flag} needs a value`);
    if (flag === '--config') { configFile = value; continue; }
    const o = BY_FLAG.get(flag);
    if (!o) throw new OptionsError(`unknown option ${flag} (see --help)`);
    flags[o.name] = checkValue(o, fromFlag(o, value), flag);
  }
  let config = {};
  if (configFile !== null) {
    let text;
    try { text = readFile(configFile); } catch (err) { throw new OptionsError(`--config ${configFile}: ${err.message}`); }
    let json;
    try { json = JSON.parse(text); } catch (err) { throw new OptionsError(`--config ${configFile}: not JSON: ${err.message}`); }
    config = validateConfig(json, `--config ${configFile}`);
  }
  return { options: { ...defaultOptions(), ...config, ...flags } };
}
