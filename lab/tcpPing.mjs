// Run inside the client namespace (ip netns exec NS node tcpPing.mjs HOST PORT COUNT): times COUNT sequential TCP
// handshakes (SYN to SYN-ACK, as curl's time_connect) and prints them as a JSON array of milliseconds.
import net from 'node:net';

const [host, port, count] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 20)];
const times = [];
for (let i = 0; i < count; i++) {
  times.push(await new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const socket = net.connect({ host, port, noDelay: true }, () => {
      resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      socket.destroy();
    });
    socket.once('error', reject);
  }));
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write(JSON.stringify(times));
