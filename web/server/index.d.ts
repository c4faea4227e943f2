// Types of `h3probe/server` (index.mjs). web/test/unit/serverTypes.test.mjs fails when an export is missing here.
// They need no @types/node: where Node objects cross the interface, the types name only the members h3probe uses, so
// Node's own objects (a stream, an IncomingMessage, a net.BlockList) fit them, and a project without @types/node
// compiles under tsc --strict (serverTypes.test.mjs checks both).
import type { H3probeNode } from './h3probeNode.js';

export type { H3probeNode, Decoded, StoredRun, StoredRequest, Schema, GroupReport, QuantileRow } from './h3probeNode.js';
export { loadH3probeNode } from './h3probeNode.js';

/** Where a beacon's client is: how the collector resolves the client address and its country. */
export interface LocationOptions {
  /** Proxies whose forwarding headers are believed: addresses or CIDR ranges (a list or a comma-separated string). */
  trustedProxies?: string | string[];
  /** Headers a trusted proxy sets to the client's ISO country code, e.g. cf-ipcountry. */
  countryHeaders?: string[];
  /** An .mmdb country database; default the IPtoASN database of the optional peer package. */
  countryDb?: string;
  /** Replaces the database lookup: address to ISO country code or null. */
  lookupCountry?: (ip: string) => string | null;
  /**
   * A directory of IP-to-AS tables in @ip-location-db/asn's format (asn-ipv4-num.csv, asn-ipv6-num.csv), or 'off';
   * default the tables of that optional peer package.
   */
  asnDb?: string;
  /** Replaces the network lookup: address to its autonomous system, or null. */
  lookupNetwork?: (ip: string) => { asn: number; org: string | null } | null;
}

/** What exportNdjson writes to: a Node Writable (a file stream, process.stdout) fits. */
export interface NdjsonSink {
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** A request as the client locator reads it: a Node http.IncomingMessage fits. */
export interface ClientRequestLike {
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string } | null;
}

/** Trusted proxy addresses and ranges (a Node net.BlockList). */
export interface AddressList {
  check(address: string, type?: 'ipv4' | 'ipv6'): boolean;
}

/** A collector's store: openStore() of SQLite. */
export interface Store {
  countRuns(): number;
  close(): void;
  exportNdjson(stream: NdjsonSink): Promise<number>;
}

export const STORE_VERSION: number;
/** The store's tables as SQL, from the core's schema(). */
export function storeSchemaSql(schema: ReturnType<H3probeNode['schema']>): string;
/** Opens (creates, adds missing columns to) the SQLite store at dbPath. Needs better-sqlite3. */
export function openStore(dbPath: string, core: H3probeNode): Store;

export interface Collector {
  port: number;
  /** Resolves with the run count once at least n runs are stored; rejects after timeoutMs. */
  waitForRuns(n: number, timeoutMs?: number): Promise<number>;
  /** This process's metrics, as /metrics exposes them. */
  metrics: Record<string, unknown>;
  /** Graceful stop: in-flight beacons answered; true when every connection ended within deadlineMs. */
  drain(deadlineMs?: number): Promise<boolean>;
  close(): Promise<void>;
}
/** Starts the beacon collector's HTTP server (docs/collector.md has every option, its default and meaning). */
export function startCollector(options: {
  port?: number; host?: string; store: Store; core: H3probeNode; location?: LocationOptions;
  /** The beacon path, default /beacon. */
  path?: string;
  /** Page origins allowed to send beacons (CORS); default ['*']. */
  allowedOrigins?: string[];
  /** Beacons per minute per client network (IPv4 /24, IPv6 /48), and the burst above it; past them 429. */
  rateLimit?: number; rateBurst?: number;
  maxConnections?: number;
  /** Seconds. */
  headersTimeout?: number; requestTimeout?: number; keepAliveTimeout?: number;
  /** The clock that stamps each beacon's receivedAt, in ms since the epoch; default Date.now. */
  now?: () => number;
  /**
   * The live report (GET /report, /report.json, /report.txt behind the token; docs/collector.md): the token, the store
   * spec the report thread opens read-only (sqlite:PATH or clickhouse://…), and the cache's and the rate limit's
   * settings (reportMaxAge in seconds, reportRateLimit per minute, reportRateBurst). Without it the routes do not exist.
   */
  report?: { token: string; store: string; maxAge?: number; rateLimit?: number; rateBurst?: number } | null;
}): Promise<Collector>;

export const DEFAULT_COUNTRY_HEADERS: readonly string[];
export function parseTrustedProxies(list: string | string[] | undefined): AddressList;
export function createClientLocator(options?: LocationOptions, env?: Record<string, string | undefined>):
  (req: ClientRequestLike) => { country: string | null; region: string; asn: number | null; asOrg: string | null };

export const REGIONS: readonly string[];
/** The region of an ISO country code ('unknown' when not known). */
export function regionForCountry(country: string | null | undefined): string;

export const ARMS: readonly ['h2-h3', 'h2-h2', 'h3-h3'];
/** The report of a store: text, optionally the HTML page. */
export function makeReport(core: H3probeNode, options?: {
  db?: unknown; dbPath?: string; metric?: string; since?: string; arms?: 'h2-h3' | 'h2-h2' | 'h3-h3';
  by?: 'region' | 'browser' | 'browser_version' | 'config' | 'effective_type' | 'context' | 'day' | 'network';
  /** With by 'network': the fewest runs of a network shown on its own (the rest pooled as "other"); default 10. */
  minGroupRuns?: number;
  method?: 'delta' | 'bootstrap'; confidence?: number; htmlPath?: string | null; jsonPath?: string | null;
  /** The daily series as report.daily; default: when HTML or JSON is made. */
  daily?: boolean;
  /** The HTML page and the JSON text in the result (html, json), as the files would hold them; no file is written. */
  pages?: boolean;
}): Promise<{ report: unknown; text: string; htmlPath: string | null; jsonPath: string | null; html?: string; json?: string;
  timings: Record<string, number> }>;

/** The options of `h3probe origins` (see docs/deploying.md). */
export interface OriginsOptions {
  h2?: string; h3?: string; h2Bind?: string; h3Bind?: string; h2Port?: number; only?: 'h2' | 'h3';
  pageOrigins?: string[]; collector?: string; collectorUpstream?: string; collectorBind?: string; email?: string;
  /** 'acme' (default), 'internal', or 'CERT,KEY' file paths. */
  tls?: string;
  /** Caddy's admin API: 'off' (default) or a loopback 'localhost:2019', '127.0.0.1:PORT', '[::1]:PORT'. */
  admin?: string;
}
/** Every problem with the options, as messages (empty: usable). */
export function originsProblems(options: OriginsOptions): string[];
/** A production Caddyfile for the two test origins and, optionally, the collector behind Caddy. */
export function originsCaddyfile(options: OriginsOptions): string;
