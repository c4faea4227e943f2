// A small JS stand-in for the WASM beacon validator, for the stack's own tests and smoke run; production passes the C++ one.

export function jsonValidate(text) {
  let beacon;
  try {
    beacon = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not JSON: ${err.message}` };
  }
  if (beacon?.schema !== 'h3probe/1') return { ok: false, error: 'schema must be "h3probe/1"' };
  if (typeof beacon.run_id !== 'string' || beacon.run_id === '') return { ok: false, error: 'run_id missing' };
  if (!Array.isArray(beacon.samples)) return { ok: false, error: 'samples must be an array' };
  return { ok: true, beacon };
}
