/**
 * Found by review of 555231cb. The warnings about a meter that throws quote its error (third-party
 * text, which may carry what it was given: a `lock.name`, an attribute), escaped and cut to 200
 * characters. They escaped the C0 and C1 controls and the line separators only, and cut by UTF-16
 * code units: the invisible formatting characters every key in a message is escaped of
 * (`quoteKey`: bidi overrides and isolates, zero-width characters) went out raw, and a cut through
 * an emoji left a lone surrogate. The meter's text is now escaped as a key is, and cut whole.
 */
import type { Meter, MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import { describe, expect, it, onTestFinished } from 'vitest';
import { enableLockMetrics } from '../../lib/otel/index.js';
import { useLockMetrics } from '../support/lock-metrics.js';

const UNESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;

describe("a meter's error quoted in the lock metrics' warning", () => {
  const lockMetrics = useLockMetrics();

  it('is escaped as a key is, and cut between whole characters', async () => {
    const real = lockMetrics.provider;
    // Bidi override and isolate, a zero-width joiner, then an emoji across the 200th code unit.
    const text = `refused "order\u202Eredro\u2066x\u2069\u200D" ${'y'.repeat(200 - 27)}\u{1F600} and more`;
    expect(text.charCodeAt(199)).toBeGreaterThanOrEqual(0xd800);
    const provider: ApiMeterProvider = {
      getMeter: (...args: Parameters<ApiMeterProvider['getMeter']>): Meter =>
        new Proxy(real.getMeter(...args), {
          get: (target, property, receiver) =>
            property === 'createHistogram'
              ? () => {
                  throw new Error(text);
                }
              : Reflect.get(target, property, receiver),
        }),
    };
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    onTestFinished(() => void process.off('warning', onWarning));
    const handle = enableLockMetrics({ meterProvider: provider });
    onTestFinished(() => handle.disable());
    await expect.poll(() => warnings.filter((message) => message.includes('nestjs-redis-lock')).length).toBe(1);
    const warning = warnings.find((message) => message.includes('nestjs-redis-lock'))!;
    expect(warning).toContain('lock.acquire.duration');
    expect(warning).toContain('refused');
    // Before: U+202E, U+2066, U+2069 and U+200D raw, and the emoji's first half alone.
    expect(warning).not.toMatch(UNESCAPED);
  });
});
