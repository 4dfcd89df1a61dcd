/** The ttl a lock had before an extend() set its own, counted from `ttlSince`. */
export interface TtlBefore {
  ttl: number;
  ttlSince: number;
}

/**
 * The extend() calls of one lock still on their way, in the order they set their ttl, each with
 * the ttl its failure gives back. A failed call's ttl is dropped wherever it stands: the last
 * one's failure gives back the ttl it found, an earlier one's passes what it found on to the call
 * after it. Compared with the last one only, two overlapping calls that both failed left the
 * lock on the first one's ttl (the second gave back what the first had set), which the next
 * renewal then renewed to. A call that succeeded settles those before it: their ttl is past.
 */
export class ExtendsOnTheirWay {
  private readonly calls: { before: TtlBefore }[] = [];

  /** Adds a call that set its ttl, `before` what it found; returns its entry. */
  sent(before: TtlBefore): object {
    const call = { before };
    this.calls.push(call);
    return call;
  }

  /** `call` succeeded: it and every call before it are settled. */
  succeeded(call: object): void {
    const at = this.calls.indexOf(call as { before: TtlBefore });
    if (at >= 0) this.calls.splice(0, at + 1);
  }

  /** `call` failed: the ttl to give back, or undefined where a later call (or a success) stands. */
  failed(call: object): TtlBefore | undefined {
    const at = this.calls.indexOf(call as { before: TtlBefore });
    if (at < 0) return undefined;
    const [{ before }] = this.calls.splice(at, 1);
    const later = this.calls[at];
    if (later === undefined) return before;
    later.before = before;
    return undefined;
  }
}
