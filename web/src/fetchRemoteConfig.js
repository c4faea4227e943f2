// Fetches the remote config (kill switch, sample rate, experiment keys) with a short timeout; never rejects.

// Resolves to { config } (a plain object) or { error } saying why there is none.
export async function fetchRemoteConfig(url, timeoutMs) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { cache: 'no-store', credentials: 'omit', signal: controller.signal });
    if (!response.ok) return { error: `HTTP ${response.status} from ${url}` };
    const text = await response.text();
    let config;
    try {
      config = JSON.parse(text);
    } catch {
      return { error: 'not valid JSON' };
    }
    if (config === null || typeof config !== 'object' || Array.isArray(config)) return { error: 'must be a JSON object' };
    return { config };
  } catch (error) {
    return { error: controller.signal.aborted ? `no answer within ${timeoutMs} ms` : String((error && error.name) || error) };
  } finally {
    clearTimeout(timer);
  }
}
