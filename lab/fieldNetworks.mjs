// The field mode's clients (docs/lab.md, "Networks"): one lab address per region, or per region and network when the
// profile lists networks. A network's page loads leave from their own lab address, and the lab's edge (Caddy) reports
// that client to the collector as a stand-in public address of the network's AS: the first address of one of its
// ranges in the network tables that the country database also places in the region's country. The collector then finds
// the network by its real lookup (clientLocator.mjs); no packet is ever sent to the stand-in address.
import fs from 'node:fs';
import path from 'node:path';
import { labClientAddress } from './createLabNetwork.mjs';
import { createAsnLookup, defaultAsnDb } from '../web/server/networkFor.mjs';
import { createCountryLookup, isNotPublic } from '../web/server/regionFor.mjs';

const dotted = (n) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/**
 * A public IPv4 address that the collector's lookups map to AS `asn` and to `country`, from the network tables in dir
 * (default the bundled ones); throws if the tables hold none.
 */
export function standInAddress(asn, country, { dir = defaultAsnDb(), lookupCountry = createCountryLookup(), lookupNetwork = createAsnLookup(dir) } = {}) {
  for (const line of fs.readFileSync(path.join(dir, 'asn-ipv4-num.csv'), 'utf8').split('\n')) {
    const [start, , as] = line.split(',', 3);
    if (Number(as) !== asn) continue;
    const ip = dotted(Number(start) + 1);
    if (!isNotPublic(ip) && lookupNetwork(ip)?.asn === asn && lookupCountry(ip) === country) return ip;
  }
  throw new Error(`the network tables have no address of AS${asn} in ${country}: pick another AS for that region`);
}

/**
 * The lab's clients for a profile: [{region, country, address (lab), network: {asn, udpBlocked, standIn} | null}], one
 * per region without networks, one per network otherwise; and clientFor(drawn) → the client of a drawPath() result.
 */
export function fieldClients(profile) {
  const clients = [];
  const lookups = profile.regions.some((r) => r.networks) ? { lookupCountry: createCountryLookup(), lookupNetwork: createAsnLookup() } : null;
  for (const r of profile.regions) {
    for (const n of r.networks ?? [null]) {
      clients.push({ region: r.region, country: r.country, address: labClientAddress(clients.length),
        network: n && { asn: n.asn, udpBlocked: Boolean(n.udpBlocked), standIn: standInAddress(n.asn, r.country, lookups) } });
    }
  }
  const clientFor = (drawn) => clients.find((c) => c.region === drawn.region && (c.network?.asn ?? null) === (drawn.network?.asn ?? null));
  return { clients, clientFor };
}
