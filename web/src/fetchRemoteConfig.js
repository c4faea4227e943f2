// Fetches the remote config (kill switch, sample rate, experiment keys) with a short timeout; never rejects.

// Resolves to { config } (a plain object) or { error } saying why there is none: the HTTP status, or the name of the
// error (AbortError: no answer in time; SyntaxError: not JSON; TypeError: no connection).
export async function fetchRemoteConfig(url, timeoutMs) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { cache: 'no-store', credentials: 'omit', signal: controller.signal });
    if (!response.ok) return { error: `HTTP ${response.status} from ${url}` };
    const config = await response.json();
    return config !== null && typeof config === 'object' && !Array.isArray(config) ? { config } : { error: 'not a JSON object' };
  } catch (error) {
    return { error: String(error.name || error) };
  } finally {
    clearTimeout(timer);
  }
}
