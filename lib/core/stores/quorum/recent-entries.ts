/**
 * A map that remembers the entries set last: at least the newest `generation` of them, at most
 * twice as many. Entries go into the current generation; once it holds `generation`, the
 * generation before it is dropped whole and the current one takes its place.
 *
 * Why not one `Map` trimmed oldest-first (`delete(keys().next().value)` before each `set`): V8
 * keeps a deleted entry's slot until the table is rebuilt, and every `keys().next()` walks those
 * slots from the front again. At 10,000 entries that cost 7 us per insert on Node 20 (0.1 us
 * here), paid by every quorum release once the bound was reached.
 */
export class RecentMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(private readonly generation: number) {}

  get size(): number {
    return this.current.size + this.previous.size;
  }

  has(key: K): boolean {
    return this.current.has(key) || this.previous.has(key);
  }

  get(key: K): V | undefined {
    return this.current.has(key) ? this.current.get(key) : this.previous.get(key);
  }

  /** Sets `key`, which counts as set last from now on (a key lives in one generation only). */
  set(key: K, value: V): this {
    if (this.previous.size > 0) this.previous.delete(key);
    this.current.set(key, value);
    if (this.current.size >= this.generation) {
      this.previous = this.current;
      this.current = new Map();
    }
    return this;
  }

  delete(key: K): boolean {
    return this.current.delete(key) || this.previous.delete(key);
  }

  clear(): void {
    this.current.clear();
    this.previous.clear();
  }

  /** Older entries first. Deleting entries while iterating is allowed, as on a `Map`. */
  *[Symbol.iterator](): IterableIterator<[K, V]> {
    yield* this.previous;
    yield* this.current;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this) yield value;
  }
}

/** A set with the bound of `RecentMap`: at least the newest `generation` members, at most twice as many. */
export class RecentSet<T> {
  private readonly members: RecentMap<T, true>;

  constructor(generation: number) {
    this.members = new RecentMap(generation);
  }

  get size(): number {
    return this.members.size;
  }

  has(member: T): boolean {
    return this.members.has(member);
  }

  add(member: T): this {
    this.members.set(member, true);
    return this;
  }

  delete(member: T): boolean {
    return this.members.delete(member);
  }

  clear(): void {
    this.members.clear();
  }

  /** Older members first. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (const [member] of this.members) yield member;
  }
}
