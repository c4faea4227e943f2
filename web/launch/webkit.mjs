// End-to-end helper: drive WebKitGTK (Debian `webkit2gtk-driver`: WebKitWebDriver, which starts WebKitGTK's MiniBrowser)
// against a running stack, over classic WebDriver with `selenium-webdriver` (npm). WebKitGTK has no headless mode and no
// host-resolver switch (docs/record/platform-notes.md, "WebKitGTK"), so:
// - the browser draws into its own Xvfb display;
// - the driver and everything it starts run in a private mount namespace (`unshare -m`) where a hosts file of our own
//   is bind-mounted over /etc/hosts: the test host names resolve to 127.0.0.1 there, and nowhere else;
// - the stack's private certificate is accepted through the acceptInsecureCerts capability.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Builder } from 'selenium-webdriver';
import { freePort } from '../cli/ports.mjs';
import { once } from '../stack/hookSignals.mjs';

export const WEBKIT_DRIVER_PATH = process.env.H3PROBE_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const XVFB_PATH = process.env.H3PROBE_XVFB ?? '/usr/bin/Xvfb';

/** Why WebKitGTK cannot run here (a string naming what is missing), or false when it can. */
export function webkitMissing() {
  const absent = [
    [WEBKIT_DRIVER_PATH, 'webkit2gtk-driver'], [XVFB_PATH, 'xvfb'], ['/usr/bin/unshare', 'util-linux'],
  ].filter(([file]) => !fs.existsSync(file));
  if (!absent.length) return false;
  return `${absent.map(([file, pkg]) => `${file} (Debian package ${pkg})`).join(', ')} not found; npm run deps installs them`;
}

/** The hosts file the browser sees: every stack host name on address. */
export function webkitHostsFile(stack, address = '127.0.0.1') {
  return `127.0.0.1 localhost\n::1 localhost\n${address} ${Object.values(stack.hosts).join(' ')}\n`;
}

// Xvfb picks a free display itself and writes its number to the fd given by -displayfd.
function startXvfb(log) {
  return new Promise((resolve, reject) => {
    const child = spawn(XVFB_PATH, ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'],
      { stdio: ['ignore', log, log, 'pipe'] });
    let out = '';
    const timer = setTimeout(() => fail(new Error('Xvfb did not report a display within 15 s')), 15000);
    const fail = (err) => { clearTimeout(timer); child.kill('SIGKILL'); reject(err); };
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`Xvfb exited (${code ?? signal}) before it reported a display`)));
    child.stdio[3].on('data', (chunk) => {
      out += chunk;
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ child, display: `:${out.trim()}` });
    });
  });
}

function waitExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
  });
}

// Ends a process group we started (the driver, MiniBrowser and WebKit's helper processes), then the leader if needed.
async function stopGroup(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
  await waitExit(child, 3000);
  try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
  await waitExit(child, 2000);
}

async function driverReady(url, child, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`WebKitWebDriver exited (${child.exitCode}) before it listened`);
    try {
      const res = await fetch(`${url}/status`);
      if (res.ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`WebKitWebDriver did not answer on ${url} within ${ms} ms`);
}

/**
 * Starts Xvfb, WebKitWebDriver (in its mount namespace) and one WebDriver session. Resolves to
 * { driver (a selenium WebDriver), log() (Xvfb's, the driver's and the browser's output so far), close() }. close()
 * ends the session and the processes, and removes the temp dir.
 */
export async function launchWebKit(stack, { address = '127.0.0.1' } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h3probe-webkit-'));
  const logPath = path.join(dir, 'webkit.log');
  const log = fs.openSync(logPath, 'a');
  let xvfb;
  let driverProcess;
  let driver;
  // An 'exit' handler cannot wait: it only signals what is left (an interrupted test still leaves no browser behind).
  const onExit = () => {
    try { if (driverProcess) process.kill(-driverProcess.pid, 'SIGKILL'); } catch { /* gone */ }
    xvfb?.child.kill('SIGKILL');
  };
  process.on('exit', onExit);
  const close = once(async () => {
    process.off('exit', onExit);
    await driver?.quit().catch(() => {});
    await stopGroup(driverProcess);
    if (xvfb) { xvfb.child.kill('SIGTERM'); await waitExit(xvfb.child, 3000); xvfb.child.kill('SIGKILL'); }
    fs.closeSync(log);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  try {
    const hosts = path.join(dir, 'hosts');
    fs.writeFileSync(hosts, webkitHostsFile(stack, address));
    xvfb = await startXvfb(log);
    const port = await freePort();
    // Its own home for WebKit's caches and data: nothing of root's profile is read or left behind.
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    driverProcess = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c',
      'mount --bind "$0" /etc/hosts && exec "$1" --port="$2"', hosts, WEBKIT_DRIVER_PATH, String(port)], {
      stdio: ['ignore', log, log],
      detached: true, // its own process group: close() ends the browser processes with it
      env: {
        ...process.env, DISPLAY: xvfb.display, HOME: home, XDG_CACHE_HOME: path.join(home, 'cache'),
        XDG_DATA_HOME: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), NO_AT_BRIDGE: '1',
      },
    });
    const url = `http://127.0.0.1:${port}`;
    await driverReady(url, driverProcess, 15000);
    driver = await new Builder().disableEnvironmentOverrides().usingServer(url).withCapabilities({
      browserName: 'MiniBrowser',
      acceptInsecureCerts: true,
      // MiniBrowser's own switches; --ignore-tls-errors is not needed: acceptInsecureCerts covers the private CA.
      'webkitgtk:browserOptions': { args: ['--automation'] },
    }).build();
  } catch (err) {
    const tail = fs.readFileSync(logPath, 'utf8').slice(-2000);
    await close();
    throw new Error(`WebKitGTK did not start: ${err.message}${tail ? `\n--- Xvfb/driver/browser output ---\n${tail}` : ''}`,
      { cause: err });
  }
  return {
    driver,
    log: () => fs.readFileSync(logPath, 'utf8'),
    close,
  };
}
