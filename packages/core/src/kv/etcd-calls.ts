import { isBrokenCircuitError } from 'cockatiel';
import { withWallClockBound } from '../clock.js';
import { StoreUnavailableError } from '../errors.js';
import { mapError } from './etcd-errors.js';

/** How long past its deadline a call may take before the overall bound answers instead. */
const CALL_BOUND_SLACK_MS = 250;

/**
 * Every unary etcd call of one {@link EtcdKv}: bounded in time, its failure mapped onto maintd's
 * error hierarchy, and a refusal by an open circuit explained by what opened it.
 */
export class EtcdCalls {
  /** Deadline of one call, in ms. */
  readonly timeoutMs: number;
  /** What the last call that reached no etcd found, for the calls an open circuit then refuses. */
  #lastUnavailable: string | undefined;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  /** Runs one call: its answer, or a maintd error within the deadline and a moment. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      // The gRPC deadline bounds one attempt; a waiting half-open breaker per endpoint and the
      // retry of a channel reset could stack several. The caller gets one answer within the
      // deadline (plus a moment for the attempt's own deadline to win when it is the cause).
      return await withWallClockBound(
        fn(),
        this.timeoutMs + CALL_BOUND_SLACK_MS,
        () => new StoreUnavailableError(`etcd unavailable: no answer within ${this.timeoutMs} ms`),
      );
    } catch (err) {
      // An open circuit refuses calls without trying them, and its error says only that: name
      // what the attempts that opened it found instead.
      if (isBrokenCircuitError(err)) {
        const why = this.#lastUnavailable ?? 'repeated failures';
        throw new StoreUnavailableError(`etcd unavailable: ${why} (circuit open)`, { cause: err });
      }
      const mapped = mapError(err);
      if (mapped instanceof StoreUnavailableError)
        this.#lastUnavailable = mapped.message.replace(/^etcd unavailable: /, '');
      throw mapped;
    }
  }
}
