/**
 * Resolves once any of `signals` is aborted: at once when one already is. A listener added to a
 * signal that is already aborted never fires, so a loop that awaits (say) a watch's creation
 * and only then listens would miss a stop or a failure that came during the await, and wait
 * for good.
 */
export function whenAborted(...signals: readonly AbortSignal[]): Promise<void> {
  if (signals.some((s) => s.aborted)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = new AbortController();
    const fire = (): void => {
      done.abort();
      resolve();
    };
    for (const s of signals) s.addEventListener('abort', fire, { once: true, signal: done.signal });
  });
}
