import { now } from './clock.js';

/** Something with a lease deadline that must be told when the deadline passes. */
export interface Expiring {
  /** The current deadline (monotonic ms); an entry whose deadline has moved is stale. */
  readonly deadline: number;
  /** Whether the deadline still matters (the lock is still held). */
  readonly live: boolean;
  expire(): void;
}

interface Entry {
  at: number;
  item: Expiring;
}

/**
 * Fires `expire()` for each item whose deadline passes, with one timer for any number of items:
 * a min-heap of deadlines, where a moved deadline leaves a stale entry that is skipped when it
 * comes up. The timer is unref'd: a deadline alone never keeps the process alive (renewals,
 * which are ref'd, do while locks are held).
 */
export class DeadlineSweeper {
  private readonly heap: Entry[] = [];
  private timer?: NodeJS.Timeout;
  private armedAt = Infinity;

  track(item: Expiring): void {
    this.push({ at: item.deadline, item });
    if (item.deadline < this.armedAt) this.arm();
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.heap.length = 0;
    this.armedAt = Infinity;
  }

  private sweep(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const current = now();
    while (this.heap.length > 0 && this.heap[0]!.at <= current) {
      const { at, item } = this.pop();
      if (item.live && item.deadline === at) item.expire();
    }
    this.arm();
  }

  private arm(): void {
    // Stale tops would only wake the timer for nothing.
    while (this.heap.length > 0 && (!this.heap[0]!.item.live || this.heap[0]!.item.deadline !== this.heap[0]!.at)) this.pop();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
    if (this.heap.length === 0) return;
    this.armedAt = this.heap[0]!.at;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, this.armedAt - now()));
    this.timer.unref();
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): Entry {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
        if (heap[child]!.at >= last.at) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
