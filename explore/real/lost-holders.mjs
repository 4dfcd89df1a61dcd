// Which section of a worker a `lost` lock event belongs to. The event names the key and the
// fencing token, not the section; a fencing token names one holder of a key. A counter Redis
// lost starts again at its clock, above the lost one's tokens, so that holds across a restart
// without persistence too; were it broken (a counter back at 1, or one past the clock), a key and
// token entered by two sections names neither, and their lost events are put on neither (each
// one's aborted signal still tells its own; the checker reports the token given twice). The
// checker's told-after-release judges the events put on a section.

/** `<key>#<fencing token>` of each lock entered, to its section (`null`: two sections). */
export class LostHolders {
  #holders = new Map();

  /** Section `sid` entered a lock holding these tokens (`{ [key]: fencingToken }`). */
  entered(sid, tokens) {
    for (const [key, token] of Object.entries(tokens)) {
      const name = `${key}#${token}`;
      this.#holders.set(name, this.#holders.has(name) && this.#holders.get(name) !== sid ? null : sid);
    }
  }

  /** The section a lost event of `key` at `fencingToken` belongs to, or undefined. */
  sectionOf(key, fencingToken) {
    return this.#holders.get(`${key}#${fencingToken}`) ?? undefined;
  }
}
