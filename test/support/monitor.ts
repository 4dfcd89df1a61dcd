import { Redis } from 'ioredis';
import { redisUrl } from './redis.js';

export interface SeenCommand {
  args: string[];
  at: number;
}

/**
 * Every command the test server receives on this worker's database that names `key`, from now
 * until `stop()`. MONITOR sees the whole server, so other workers' commands are filtered out.
 */
export async function watchCommands(key: string): Promise<{ seen: SeenCommand[]; stop(): Promise<void> }> {
  const url = redisUrl();
  const db = Number(new URL(url).pathname.slice(1));
  const monitor = await new Redis(url).monitor();
  const seen: SeenCommand[] = [];
  monitor.on('monitor', (_time: string, args: string[], _source: string, database: string) => {
    if (Number(database) === db && args.includes(key)) seen.push({ args, at: performance.now() });
  });
  return {
    seen,
    async stop() {
      // Let commands already sent reach the monitor before it goes.
      await new Promise((resolve) => setTimeout(resolve, 30));
      monitor.disconnect();
    },
  };
}

export const isScriptCall = (command: SeenCommand): boolean => /^eval(sha)?$/i.test(command.args[0] ?? '');
