import { describe, expect, it } from 'vitest';
import { DeadlineSweeper } from '../../engine/deadline-sweeper.js';
import { QuorumRound } from './quorum-round.js';

describe('QuorumRound', () => {
  it('settles once every node answered, each answer in its node’s place', async () => {
    const round = new QuorumRound<number>(3, 10_000, new DeadlineSweeper());
    round.add(2, Promise.resolve(30));
    round.add(0, Promise.resolve(10));
    round.add(1, Promise.reject(new Error('down')));
    const answers = await round.done;
    expect(answers.map((answer) => (answer.ok ? answer.value : (answer.error as Error).message))).toEqual([10, 'down', 30]);
  });

  it('counts a node that did not answer in time as failed', async () => {
    const round = new QuorumRound<number>(2, 20, new DeadlineSweeper());
    round.add(0, Promise.resolve(1));
    round.add(1, new Promise<number>(() => undefined));
    const [first, second] = await round.done;
    expect(first).toEqual({ ok: true, value: 1 });
    expect(second).toMatchObject({ ok: false, error: { message: 'no answer within 20 ms' } });
  });

  it('still counts a reply that comes in with the expiry (read in the same turn of the event loop after a stall)', async () => {
    const round = new QuorumRound<number>(2, 10_000, new DeadlineSweeper());
    round.answer(0, { ok: true, value: 1 });
    // What the sweeper's timer does once the deadline has passed, and then the reply that
    // waited in the socket while the loop was stalled:
    round.expire();
    round.answer(1, { ok: true, value: 2 });
    expect(await round.done).toEqual([
      { ok: true, value: 1 },
      { ok: true, value: 2 },
    ]);
  });

  it('ends early once enough nodes gave an answer that counts; the others are not waited for', async () => {
    const counts = (answer: { ok: boolean }) => answer.ok;
    const round = new QuorumRound<number>(3, 10_000, new DeadlineSweeper(), 2, counts);
    round.add(0, Promise.reject(new Error('down')));
    round.add(1, Promise.resolve(1));
    round.add(2, Promise.resolve(2));
    const answers = await round.done;
    expect(answers.map((answer) => answer?.ok)).toEqual([false, true, true]);
    const early = new QuorumRound<number>(3, 10_000, new DeadlineSweeper(), 2, counts);
    early.add(0, Promise.resolve(1));
    early.add(1, Promise.resolve(2));
    early.add(2, new Promise<number>(() => undefined));
    expect(await early.done).toEqual([{ ok: true, value: 1 }, { ok: true, value: 2 }, undefined]);
  });

  it('tells of a node that answers after the round ended, as failed or answered', async () => {
    const late: string[] = [];
    const counts = (answer: { ok: boolean }) => answer.ok;
    let fail!: (error: Error) => void;
    let succeed!: (value: number) => void;
    const round = new QuorumRound<number>(4, 10_000, new DeadlineSweeper(), 2, counts, (index) => late.push(`failed ${index}`), (index) => late.push(`answered ${index}`));
    round.add(0, Promise.resolve(1));
    round.add(1, Promise.resolve(2));
    round.add(2, new Promise<number>((_, reject) => (fail = reject)));
    round.add(3, new Promise<number>((resolve) => (succeed = resolve)));
    expect(await round.done).toEqual([{ ok: true, value: 1 }, { ok: true, value: 2 }, undefined, undefined]);
    fail(new Error('down'));
    succeed(4);
    await new Promise((resolve) => setImmediate(resolve));
    expect(late).toEqual(['failed 2', 'answered 3']);
  });
});
