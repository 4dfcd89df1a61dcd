/**
 * Aborts `target` with `source`'s reason when `source` aborts (at once if it has), until the
 * returned function is called. Not `AbortSignal.any()`: on Node 20 that leaves an entry in the
 * source signal for good, one per call, and a source may live for days (an outer lock's
 * signal, which a multi-key lock's part that re-enters it has).
 */
export function followSignal(source: AbortSignal, target: AbortController): () => void {
  if (source.aborted) {
    target.abort(source.reason);
    return () => undefined;
  }
  const onAbort = (): void => target.abort(source.reason);
  source.addEventListener('abort', onAbort, { once: true });
  return () => source.removeEventListener('abort', onAbort);
}
