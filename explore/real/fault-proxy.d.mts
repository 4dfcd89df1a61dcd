/**
 * A TCP proxy between clients and one Redis node, with network faults: a partition (`cut`),
 * added latency (`delay`), bytes lost in one direction (`drop`, then a reset at `heal`), and
 * `reset` of every connection, and release messages lost while commands flow (`muteMessages`).
 */
export class FaultProxy {
  static start(targetPort: number, host?: string): Promise<FaultProxy>;
  readonly port: number;
  readonly url: string;
  /** Stops all traffic without closing anything, like a partition. */
  cut(): void;
  /** Lets traffic flow again and ends delays and losses (connections that lost bytes are reset). */
  heal(): void;
  /** Delivers every chunk `ms` late, in order. */
  delay(ms: number): void;
  /** Throws away what flows in one direction until `heal()`. */
  drop(direction: 'requests' | 'replies'): void;
  /** Throws away what Redis sends the subscriber connections (those that sent SUBSCRIBE, SSUBSCRIBE or PSUBSCRIBE), others untouched. */
  muteMessages(): void;
  /** Ends `muteMessages()`: the subscriber connections that lost bytes are reset (also done by `heal()`). */
  unmuteMessages(): void;
  /** Closes every connection at once. */
  reset(): void;
  close(): Promise<void>;
}
