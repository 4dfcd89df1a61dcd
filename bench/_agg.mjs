import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2]));
const self = new Map(); const dt = p.timeDeltas; const byId = new Map(p.nodes.map(n => [n.id, n]));
const t = new Map(); p.samples.forEach((id, i) => t.set(id, (t.get(id) ?? 0) + (dt[i] ?? 0)));
const cat = (n) => { const u = n.callFrame.url; if (!u) return n.callFrame.functionName; if (u.includes('node_modules/ioredis')) return 'ioredis'; if (u.includes('node_modules/redlock')) return 'redlock'; if (u.includes('/dist/')) return 'ours'; if (u.includes('node_modules')) return 'other deps'; if (u.startsWith('node:')) return 'node:' + u.split('/')[1]?.split(':')[0]; return u; };
const agg = new Map(); let total = 0;
for (const [id, us] of t) { const n = byId.get(id); const c = cat(n); agg.set(c, (agg.get(c) ?? 0) + us); total += us; }
console.log([...agg].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([c, us]) => `${(us / 1000).toFixed(0).padStart(7)} ms ${c}`).join('\n'));
