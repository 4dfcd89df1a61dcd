import { describe, expect, it } from 'vitest';
import { clusterSlot } from './cluster-slot.js';

describe('clusterSlot', () => {
  it('matches the slots Redis computes (CLUSTER KEYSLOT)', () => {
    // Reference values from the Redis Cluster specification and redis-cli.
    expect(clusterSlot('123456789')).toBe(0x31c3 % 16384);
    expect(clusterSlot('foo')).toBe(12182);
    expect(clusterSlot('bar')).toBe(5061);
    expect(clusterSlot('{user1000}.following')).toBe(clusterSlot('{user1000}.followers'));
    expect(clusterSlot('foo{}{bar}')).toBe(clusterSlot('foo{}{bar}'));
    expect(clusterSlot('foo{{bar}}zap')).toBe(clusterSlot('{bar'));
    expect(clusterSlot('foo{bar}{zap}')).toBe(clusterSlot('bar'));
  });
});
