// Where the gate's own load_error beacon may go: the core's config rules for beaconUrl and configId
// (wasm/core/config.cpp), stated here for the gate, which has no core. web/test/unit/configRules.test.mjs runs this
// and the core's rules over one table of cases (host_tests/config_cases.json) and they must agree on each.

// [url, configId] when the core would accept both (so that its run would beacon there too), else undefined. Only an
// absent key takes the default (the core's, wasm/core/config.hpp: the unit test compares them): null, like any value
// that is not a string, is refused, as the core refuses it.
export function loadErrorTarget({ beaconUrl: url = '/beacon', configId = 'default' }) {
  // is_beacon_url: a path on this origin (not "//host") or https:// and more; no space, tab, CR or LF (any other
  // character, an NBSP or U+2028 too, is the browser's to encode). configId: 1 to 64 bytes of UTF-8, as the core counts
  // (a Blob holds a string as UTF-8).
  if (typeof url == 'string' && /^(\/(?!\/)|https:\/\/[^ \t\r\n])[^ \t\r\n]*$/.test(url) && typeof configId == 'string' &&
    configId && new Blob([configId]).size <= 64) return [url, configId];
}
