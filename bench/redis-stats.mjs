// What Redis spent on a run: INFO commandstats (usec per command, CONFIG RESETSTAT before the
// run) and INFO cpu (the server process's own CPU time, which also covers reading requests
// and writing replies).

/** Per command: calls and usec, from `INFO commandstats`. */
export function parseCommandStats(info) {
  const stats = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (match) stats[match[1]] = { calls: Number(match[2]), usec: Number(match[3]) };
  }
  return stats;
}

/** Main-thread CPU of the server in microseconds, from `INFO cpu`. */
export function parseCpuUs(info) {
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  const user = field('used_cpu_user_main_thread');
  const sys = field('used_cpu_sys_main_thread');
  return Number.isNaN(user) ? (field('used_cpu_user') + field('used_cpu_sys')) * 1e6 : (user + sys) * 1e6;
}

/** Commands the benchmark itself sends to read the figures, left out of the sums. */
const OWN = new Set(['info', 'config|resetstat', 'config', 'flushall', 'ping', 'cluster|info', 'cluster|slots', 'cluster|nodes', 'client|setname', 'select']);

/**
 * A measurement over one or more Redis nodes (`admins`, ioredis clients): `begin()` before the
 * run, `end()` after it returns summed commandstats usec, the calls per command, and the
 * servers' main-thread CPU.
 */
export function redisMeter(admins) {
  let cpuBefore = 0;
  return {
    /** `flush: false` keeps the data (e.g. locks held for the run). */
    async begin({ flush = true } = {}) {
      if (flush) await Promise.all(admins.map((admin) => admin.flushall()));
      await Promise.all(admins.map((admin) => admin.config('RESETSTAT')));
      cpuBefore = (await Promise.all(admins.map(async (admin) => parseCpuUs(await admin.info('cpu'))))).reduce((a, b) => a + b, 0);
    },
    async end() {
      const cpuAfter = (await Promise.all(admins.map(async (admin) => parseCpuUs(await admin.info('cpu'))))).reduce((a, b) => a + b, 0);
      const commands = {};
      let usec = 0;
      for (const admin of admins) {
        for (const [command, { calls, usec: spent }] of Object.entries(parseCommandStats(await admin.info('commandstats')))) {
          if (OWN.has(command)) continue;
          commands[command] ??= { calls: 0, usec: 0 };
          commands[command].calls += calls;
          commands[command].usec += spent;
          usec += spent;
        }
      }
      return { commandUsec: usec, processCpuUs: cpuAfter - cpuBefore, commands };
    },
  };
}
