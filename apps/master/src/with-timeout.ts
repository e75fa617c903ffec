import { type Clock, StoreUnavailableError } from '@maintd/core';

/** `p`, or a {@link StoreUnavailableError} once `ms` of `clock` time pass first. */
export async function withTimeout<T>(clock: Clock, p: Promise<T>, ms: number): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      p,
      clock.sleep(ms, timer.signal).then(() => {
        throw new StoreUnavailableError(`no answer within ${ms} ms`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}
