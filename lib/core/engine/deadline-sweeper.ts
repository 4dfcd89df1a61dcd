import { systemClock, type Clock, type ClockTimer } from '../time/clock.js';

/** Something with a lease deadline that must be told when the deadline passes. */
export interface Expiring {
  /** The deadline (monotonic ms). */
  readonly deadline: number;
  /** Position in the sweeper's heap, kept by the sweeper; -1 when not tracked. */
  sweepIndex: number;
  expire(): void;
}

/**
 * Fires `expire()` for each item whose deadline passes, with one timer for any number of
 * items: an indexed min-heap of deadlines, so that moving or removing a deadline costs
 * O(log n) and nothing stale piles up. The timer is unref'd: a deadline alone never keeps the
 * process alive (renewals, which are ref'd, do while locks are held).
 */
export class DeadlineSweeper {
  private readonly heap: Expiring[] = [];
  private timer?: ClockTimer;
  private armedAt = Infinity;

  /**
   * `outside`: runs its function outside any call chain of the lock engine. The one timer is
   * armed from whatever call tracked the earliest deadline; made there, it would carry that
   * call's chain (its locks) into every later sweep, and a loss told from a sweep would hand
   * that chain to the code it wakes (an election's retry re-entering a lost lease, say).
   */
  constructor(
    private readonly clock: Clock = systemClock,
    private readonly outside: <T>(fn: () => T) => T = (fn) => fn(),
  ) {}

  /** Starts tracking `item`, or moves it after its deadline changed. */
  track(item: Expiring): void {
    if (item.sweepIndex === -1) {
      item.sweepIndex = this.heap.length;
      this.heap.push(item);
    }
    this.siftDown(this.siftUp(item.sweepIndex));
    this.arm();
  }

  untrack(item: Expiring): void {
    const index = item.sweepIndex;
    if (index === -1) return;
    item.sweepIndex = -1;
    const last = this.heap.pop()!;
    if (last !== item) {
      this.heap[index] = last;
      last.sweepIndex = index;
      this.siftDown(this.siftUp(index));
    }
    // The timer stays armed when the heap empties: the next lock usually has a later deadline,
    // so taking and releasing locks in a loop does not reset a timer each time (it is unref'd,
    // and a sweep of an empty heap does nothing). Not on a stepped clock (the testing module's
    // manual clock), whose timers cost nothing to set and are the test's own: there it would be
    // counted in `pendingTimers` of an application that waits for nothing.
    if (this.heap.length === 0 && this.clock.stepped === true) this.disarm();
  }

  close(): void {
    for (const item of this.heap) item.sweepIndex = -1;
    this.heap.length = 0;
    this.disarm();
  }

  private sweep(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const current = this.clock.now();
    while (this.heap.length > 0 && this.heap[0]!.deadline <= current) {
      const item = this.heap[0]!;
      this.untrack(item);
      item.expire();
    }
    this.arm();
  }

  /** Keeps the timer on the earliest deadline; re-arms only when that moved earlier. */
  private arm(): void {
    const first = this.heap[0];
    if (first === undefined) return;
    if (this.timer !== undefined && this.armedAt <= first.deadline) return;
    this.timer?.cancel();
    this.armedAt = first.deadline;
    // The clock's timers reach a deadline past Node's timer limit (a lease of weeks) in chunks.
    this.timer = this.outside(() => this.clock.setTimer(() => this.sweep(), Math.max(0, first.deadline - this.clock.now()), true));
  }

  private disarm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.armedAt = Infinity;
  }

  private siftUp(index: number): number {
    const heap = this.heap;
    const item = heap[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.deadline <= item.deadline) break;
      heap[index] = heap[parent]!;
      heap[index]!.sweepIndex = index;
      index = parent;
    }
    heap[index] = item;
    item.sweepIndex = index;
    return index;
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    const item = heap[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.deadline < heap[left]!.deadline ? right : left;
      if (heap[child]!.deadline >= item.deadline) break;
      heap[index] = heap[child]!;
      heap[index]!.sweepIndex = index;
      index = child;
    }
    heap[index] = item;
    item.sweepIndex = index;
  }
}
