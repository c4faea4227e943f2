// The lab's field mode stands in for a CDN edge in front of the collector: its page site sets the country header of
// each proxied beacon from the client's address, and reports a client with a network as that network's stand-in
// public address in X-Forwarded-For. An edit of the local stack's Caddyfile (startStack's editCaddyfile).

/** countryByClient {clientIp: 'US'} ('XX', "no country", for any other client); forwardedForByClient {clientIp: publicIp}. */
export function edgeHeaders({ upstream, countryByClient = {}, forwardedForByClient = {}, countryHeader = 'X-Country-Code' }) {
  if (!/^[A-Za-z][\w-]*$/.test(countryHeader)) throw new Error(`bad country header name: ${countryHeader}`);
  const countries = Object.entries(countryByClient);
  const forwarded = Object.entries(forwardedForByClient);
  for (const [ip, code] of countries) if (!/^[0-9.]+$/.test(ip) || !/^[A-Z]{2}$/.test(code)) throw new Error(`bad client country entry: ${ip} ${code}`);
  for (const [ip, as] of forwarded) if (!/^[0-9.]+$/.test(ip) || !/^[0-9.]+$/.test(as)) throw new Error(`bad client forwarded-for entry: ${ip} ${as}`);
  const maps = [
    ...(countries.length ? ['map {remote_host} {client_country} {', ...countries.map(([ip, code]) => `\t${ip} ${code}`), '\tdefault XX', '}'] : []),
    ...(forwarded.length ? ['map {remote_host} {client_forwarded_for} {', ...forwarded.map(([ip, as]) => `\t${ip} ${as}`), '\tdefault {remote_host}', '}'] : []),
  ];
  const headers = [...(countries.length ? [`header_up ${countryHeader} {client_country}`] : []),
    // Replaces the X-Forwarded-For that reverse_proxy writes (Caddy 2.6.2 applies header_up after it).
    ...(forwarded.length ? ['header_up X-Forwarded-For {client_forwarded_for}'] : [])];
  return (text) => {
    if (!headers.length) return text;
    const proxy = `\t\treverse_proxy ${upstream}\n`;
    const at = text.indexOf('\t@beacon {\n');
    if (at < 0 || !text.includes(proxy)) throw new Error(`the page site has no beacon route proxied to ${upstream}`);
    return (text.slice(0, at) + maps.map((l) => `\t${l}\n`).join('') + text.slice(at))
      .replace(proxy, `\t\treverse_proxy ${upstream} {\n${headers.map((h) => `\t\t\t${h}\n`).join('')}\t\t}\n`);
  };
}
