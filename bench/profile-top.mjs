// Lists the functions with the most self time in a .cpuprofile (from node --cpu-prof).
import { readFileSync } from 'node:fs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const self = new Map();
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const { callFrame } = byId.get(profile.samples[i]);
  const where = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/wt-[^/]+\//, '')}:${callFrame.lineNumber + 1}`;
  self.set(where, (self.get(where) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
for (const [where, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 30))) {
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${where}`);
}
