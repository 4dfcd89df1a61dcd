import { Injectable } from '@nestjs/common';
import type { Meter, MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { WithoutOverlapping } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// enableLockMetrics() records from node:diagnostics_channel subscribers with no try/catch. Node
// turns an exception thrown by a channel subscriber into an uncaught exception (process.nextTick
// rethrow): a meter whose instrument throws (a vendor SDK or wrapper with a bug, an attributes
// processor that throws) brings the whole application down at the next lock acquisition, from
// a telemetry path, instead of costing a metric. The job itself ran fine.
describe('lock metrics recorded on a meter whose histogram throws', () => {
  useRedis();
  const lockMetrics = useLockMetrics();
  const saved = process.listeners('uncaughtException');
  afterEach(() => {
    process.removeAllListeners('uncaughtException');
    for (const listener of saved) process.on('uncaughtException', listener);
  });

  it('does not raise an uncaught exception in the application', async () => {
    const real = lockMetrics.provider;
    const provider: ApiMeterProvider = {
      getMeter: (...args: Parameters<ApiMeterProvider['getMeter']>): Meter => {
        const meter = real.getMeter(...args);
        return new Proxy(meter, {
          get: (target, property, receiver) =>
            property === 'createHistogram'
              ? () => ({ record: () => { throw new Error('exporter bug'); } })
              : Reflect.get(target, property, receiver),
        });
      },
    };
    lockMetrics.enable({ meterProvider: provider });
    @Injectable()
    class Job {
      runs = 0;
      @WithoutOverlapping({ ttl: '10s' })
      async run(): Promise<string> {
        this.runs++;
        return 'ran';
      }
    }
    const app = await startJobApp([Job]);
    const uncaught: string[] = [];
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', (error) => uncaught.push((error as Error).message));
    expect(await app.get<Job>(Job).run()).toBe('ran');
    await sleep(50);
    // Fails: ['exporter bug', 'exporter bug'] (acquired and released each record a histogram):
    // in a real process each of them kills it.
    expect(uncaught).toEqual([]);
  });
});
