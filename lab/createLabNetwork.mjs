// Creates the lab's two network namespaces (client, server), each with a TUN device and a 198.18.0.0/24 address, and removes them.
import { execFileSync } from 'node:child_process';

// 198.18.0.0/15 is set aside for network benchmarks (RFC 2544); these addresses exist only inside the lab's namespaces.
export const LAB_ADDRESSES = Object.freeze({ cli: '198.18.0.1', srv: '198.18.0.2' });
export const LAB_DEVICE = 'tun0';

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** The namespace names for a prefix: exactly PREFIX-cli and PREFIX-srv, so prefixes never touch each other's namespaces. */
export function labNamespaces(prefix = 'h3lab') {
  if (!/^[a-z0-9-]{1,20}$/.test(prefix)) throw new Error(`bad lab prefix: ${prefix}`);
  return { cli: `${prefix}-cli`, srv: `${prefix}-srv` };
}

/** Creates both namespaces (removing stale ones of the same names first). Synchronous, so it is also safe in 'exit' handlers. */
export function createLabNetwork({ prefix = 'h3lab' } = {}) {
  const names = labNamespaces(prefix);
  removeLabNetwork({ prefix });
  try {
    for (const [side, ns] of Object.entries(names)) {
      ip('netns', 'add', ns);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      // A persistent TUN device: it stays while no process has it open (the relay attaches to it and can come and go).
      ip('netns', 'exec', ns, 'ip', 'tuntap', 'add', 'dev', LAB_DEVICE, 'mode', 'tun');
      ip('-n', ns, 'addr', 'add', `${LAB_ADDRESSES[side]}/24`, 'dev', LAB_DEVICE);
      ip('-n', ns, 'link', 'set', LAB_DEVICE, 'up');
    }
  } catch (err) {
    removeLabNetwork({ prefix });
    throw new Error(`could not create the lab network: ${err.stderr?.toString().trim() || err.message}`);
  }
  return { names, addresses: LAB_ADDRESSES, device: LAB_DEVICE, remove: () => removeLabNetwork({ prefix }) };
}

/**
 * Removes PREFIX-cli and PREFIX-srv if they exist. Processes still inside them (a crashed earlier lab run's Caddy or
 * Chromium) would keep a deleted namespace alive, so they are killed first, by pid. The TUN devices go with the namespace.
 */
export function removeLabNetwork({ prefix = 'h3lab' } = {}) {
  const names = Object.values(labNamespaces(prefix));
  let existing;
  try {
    existing = ip('netns', 'list').split('\n').map((l) => l.split(' ')[0]);
  } catch {
    return [];
  }
  const removed = [];
  for (const ns of names.filter((n) => existing.includes(n))) {
    try {
      for (const pid of ip('netns', 'pids', ns).split('\n').map(Number).filter((p) => p > 1)) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
      }
    } catch { /* no pids */ }
    try {
      ip('netns', 'del', ns);
      removed.push(ns);
    } catch { /* reported by the caller's leftover check */ }
  }
  return removed;
}

/** The i-th extra client address of the field mode (0-based): 198.18.0.10, .11, ... (at most 200). */
export function labClientAddress(i) {
  if (!Number.isInteger(i) || i < 0 || i >= 200) throw new Error(`client address index out of range: ${i}`);
  return `198.18.0.${10 + i}`;
}

/** Adds an address to the client namespace's TUN device (same /24, so the server's replies come back through the relay). */
export function addClientAddress(names, address) {
  ip('-n', names.cli, 'addr', 'add', `${address}/24`, 'dev', LAB_DEVICE);
}

/** New connections from the client namespace to the lab's /24 leave from `address` (the route's preferred source). */
export function useClientAddress(names, address) {
  ip('-n', names.cli, 'route', 'replace', '198.18.0.0/24', 'dev', LAB_DEVICE, 'proto', 'kernel', 'scope', 'link', 'src', address);
}

/** Why the lab cannot run here, or null: needs root, /dev/net/tun and working `ip netns` (tried with a throw-away namespace). */
export function labUnavailableReason() {
  if (process.platform !== 'linux') return 'the lab needs Linux (network namespaces and TUN devices)';
  if (process.getuid?.() !== 0) return 'the lab needs root (network namespaces, TUN devices)';
  try {
    execFileSync('test', ['-c', '/dev/net/tun']);
  } catch {
    return '/dev/net/tun is missing (no TUN support in this kernel or container)';
  }
  const probe = `h3lab-probe${process.pid % 100000}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'exec', probe, 'ip', 'tuntap', 'add', 'dev', 'probe0', 'mode', 'tun');
  } catch (err) {
    return `network namespaces or TUN devices unavailable: ${err.stderr?.toString().trim() || err.message}`;
  } finally {
    try { ip('netns', 'del', probe); } catch { /* was never created */ }
  }
  return null;
}
