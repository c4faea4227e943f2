// Long-lived child processes (Caddy, the lab's relay and collector service): killed if this process exits first,
// and stopped once however often stop() is called: SIGTERM, then SIGKILL if the child is still there after graceMs.
import fs from 'node:fs';

const live = new Set();
// A synchronous last resort: 'exit' handlers cannot await, but kill() is synchronous.
process.on('exit', () => { for (const child of live) child.kill('SIGKILL'); });

/**
 * onExit(code, signal) runs when the child exits, before exited resolves. Returns {exited: Promise<{code, signal}>,
 * stop(): resolves once the child has exited, kill(): SIGKILL now, resolves once it has exited}.
 */
export function supervise(child, { graceMs, onExit = () => {} }) {
  live.add(child);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    live.delete(child);
    onExit(code, signal);
    resolve({ code, signal });
  }));
  let stopping = null;
  const stop = () => (stopping ??= (async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
  })());
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  return { exited, stop, kill };
}

/** The live processes of a process group, from /proc (field 5 of stat is the group; the name field may hold spaces). */
export function groupMembers(pgid) {
  const members = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(pid));
    } catch { /* gone */ }
  }
  return members;
}
