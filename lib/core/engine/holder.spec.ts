import { describe, expect, it } from 'vitest';
import { HolderRecorder, parseHolder } from './holder.js';

describe('holder record in the owner token', () => {
  it('round-trips host, pid, instance, label and since', () => {
    const before = Date.now();
    const token = `${'a'.repeat(32)}${new HolderRecorder('worker-3').suffix('Orders.pay')}`;
    const holder = parseHolder(token)!;
    expect(holder).toMatchObject({ pid: process.pid, instance: 'worker-3', label: 'Orders.pay' });
    expect(holder.since).toBeGreaterThanOrEqual(before);
    expect(parseHolder(`${'a'.repeat(32)}${new HolderRecorder(undefined).suffix(undefined)}`)).not.toHaveProperty('label');
  });

  it('stays bounded and free of ":" for the worst label and instance name', () => {
    const worst = new HolderRecorder('"'.repeat(64)).suffix('😀'.repeat(500) + ':\n');
    const token = `${'f'.repeat(32)}${worst}`;
    expect(token).not.toMatch(/[:\s]/);
    expect(token.length).toBeLessThanOrEqual(1_100);
    expect(Array.from(parseHolder(token)!.label!)).toHaveLength(64);
  });

  it('returns undefined for tokens it did not write, and bounds what it reads', () => {
    expect(parseHolder('f'.repeat(32))).toBeUndefined();
    expect(parseHolder('x.e30.1')).toBeUndefined(); // {} is not a holder
    expect(parseHolder('x.!!!.1')).toBeUndefined();
    const forged = Buffer.from(JSON.stringify(['h'.repeat(5_000), 1, null, '<b>\u0000</b>'])).toString('base64url');
    const holder = parseHolder(`x.${forged}.1`)!;
    expect(Array.from(holder.host)).toHaveLength(64);
    expect(holder.label).toBe('<b> </b>');
  });
});
