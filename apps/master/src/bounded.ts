/**
 * Runs `task` over `items` with at most `limit` calls in flight, and resolves with how many
 * returned true. The first failure stops further starts, waits for the calls in flight, and
 * rejects with it: a bulk action over etcd that went away answers 503 rather than half a count,
 * and repeating it is harmless (a park replaces a park, a reset of nothing resets nothing).
 */
export async function countBounded<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<boolean>,
): Promise<number> {
  let next = 0;
  let done = 0;
  let failure: { readonly err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        if (await task(item)) done++;
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  if (failure !== undefined) throw failure.err;
  return done;
}
