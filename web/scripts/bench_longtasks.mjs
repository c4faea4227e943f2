// `npm run bench:longtasks -- [--loads 20] [--rate 4] [--tiny]`: long tasks in Chromium with the CPU slowed down rate times,
// over `loads` page loads with the probe and as many with sampleRate 0 (the control), each with one search. Prints
// every long frame the module's scripts took part in.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startStack } from '../devstack/stack.mjs';
import { launchBrowser } from '../devstack/chromium.mjs';
import { compareLongTasks, LONG_TASK_MS } from '../devstack/longTasks.mjs';

const { values: args } = parseArgs({ options: { loads: { type: 'string', default: '20' }, rate: { type: 'string', default: '4' },
  tiny: { type: 'boolean', default: false } } }); // --tiny (npm test): the same path over 2 loads per arm
if (args.tiny) args.loads = '2';
const stack = await startStack();
const browser = await launchBrowser(stack);
try {
  const load0 = os.loadavg()[0];
  const out = await compareLongTasks(browser, stack, {
    loads: Number(args.loads), rate: Number(args.rate),
    onLoad(name, i, r) {
      for (const f of r.moduleFrames) {
        const scripts = f.scripts.map((s) => `${s.invoker || '?'} [${s.url ? new URL(s.url).pathname : ''} ${s.fn || ''}] ${Math.round(s.duration)} ms`).join('; ');
        console.log(`${name} load ${i + 1}: module frame ${Math.round(f.duration)} ms (blocking ${Math.round(f.blocking)} ms): ${scripts}`);
      }
    },
  });
  console.log(`\nChromium, CPU throttled ${args.rate}x, ${args.loads} loads per arm, long = at least ${LONG_TASK_MS} ms; load average ${load0.toFixed(1)} -> ${os.loadavg()[0].toFixed(1)}`);
  for (const [name, o] of Object.entries(out)) {
    const states = [...new Set(o.loads.map((l) => l.state))].join(',');
    console.log(`${name.padEnd(8)} long tasks ${String(o.longtasks).padStart(3)}; long frames with a module script ${String(o.moduleFrames).padStart(3)} in ${o.loadsWithModuleFrame} loads; module scripts of ${LONG_TASK_MS} ms or more ${String(o.moduleScripts).padStart(3)} in ${o.loadsWithModuleScript} loads, worst ${Math.round(o.worstModuleMs)} ms (states ${states})`);
  }
} finally {
  await browser.close();
  await stack.stop();
}
