/** Which section of a worker a `lost` lock event (key and fencing token) belongs to. */
export class LostHolders {
  /** Section `sid` entered a lock holding these tokens (`{ [key]: fencingToken }`). */
  entered(sid: string, tokens: Record<string, number>): void;
  /** The section a lost event of `key` at `fencingToken` belongs to: none when no section, or two, entered it. */
  sectionOf(key: string, fencingToken: number): string | undefined;
}
