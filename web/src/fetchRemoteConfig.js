// Fetches the remote config (kill switch, sample rate, experiment keys) with a short timeout; never rejects.

// Resolves to the config (a plain object), or to a string saying why there is none: the HTTP status, or the name of the
// error (TimeoutError: no answer in time; SyntaxError: not JSON; TypeError: no connection).
export async function fetchRemoteConfig(url, timeoutMs) {
  try {
    // (A browser without AbortSignal.timeout waits for as long as the fetch takes.)
    const response = await fetch(url, { cache: 'no-store', credentials: 'omit', signal: AbortSignal.timeout?.(timeoutMs) });
    if (!response.ok) return `HTTP ${response.status}`;
    const config = await response.json();
    return Object(config) === config && !Array.isArray(config) ? config : 'not a JSON object';
  } catch (error) {
    return error.name;
  }
}
