import { RecentMap } from './recent-entries.js';

/** A release one master owes: sent again once it answers, or at shutdown. */
export interface MissedRelease {
  index: number;
  lock: string;
  token: string;
}

const entryKey = (lock: string, token: string): string => `${lock}\n${token}`;

/**
 * The releases the masters of a quorum missed, kept by master: a master that answers again is
 * sent its own, and a master that answers after every round (late each time) must not walk the
 * others' at each answer, thousands when another master refuses every command. Bounded by master
 * as `RecentMap` (at least the newest `generation`, at most twice as many): older ones are
 * dropped, their leases end on their own.
 */
export class MissedReleases {
  /** By master index, made at its first missed release. */
  private readonly byMaster: (RecentMap<string, MissedRelease> | undefined)[] = [];

  constructor(private readonly generation: number) {}

  get size(): number {
    let size = 0;
    for (const owed of this.byMaster) size += owed?.size ?? 0;
    return size;
  }

  add(index: number, lock: string, token: string): void {
    (this.byMaster[index] ??= new RecentMap(this.generation)).set(entryKey(lock, token), { index, lock, token });
  }

  delete(index: number, lock: string, token: string): void {
    const owed = this.byMaster[index];
    if (owed !== undefined && owed.size > 0) owed.delete(entryKey(lock, token));
  }

  /** On every master. */
  deleteEverywhere(lock: string, token: string): void {
    for (let index = 0; index < this.byMaster.length; index++) this.delete(index, lock, token);
  }

  /** What master `index` owes, older first; `delete` may be called meanwhile. */
  *of(index: number): IterableIterator<MissedRelease> {
    if (this.byMaster[index] !== undefined) yield* this.byMaster[index].values();
  }

  /** Every release owed, now forgotten. */
  takeAll(): MissedRelease[] {
    const owed = this.byMaster.flatMap((entries) => (entries === undefined ? [] : [...entries.values()]));
    this.byMaster.length = 0;
    return owed;
  }
}
