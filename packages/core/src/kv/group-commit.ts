import type { Clock } from '../clock.js';
import { LeaseNotFoundError, StoreAccessDeniedError } from '../errors.js';
import type { Compare, Kv, TxnOp, TxnResult } from './port.js';

// etcd refuses a transaction with more than 128 compares or ops in a branch (--max-txn-ops) and
// a request over 1.5 MiB (--max-request-bytes): batches stay well inside both.
const MAX_OPS = 120;
const MAX_BYTES = 512 * 1024;
/**
 * Longest a transaction waits for the calls ahead of it before it goes out beside them: a call
 * stalled on a slow or absent etcd must not add its delay to the next one's own (an API call
 * answers 503 within one etcd call deadline, not two).
 */
export const GROUP_COMMIT_STALL_MS = 100;

/**
 * Microtask turns a batch's slot stays taken after its callers are answered. Those callers mostly
 * send their next transaction within a few turns (a claim's finish, a pool slot's next claim):
 * freed at once, the slot went to the one or two already waiting, and the callers just answered
 * waited for the batch after (with 4 callers, 1.9 members a batch; held 2 turns or more, 3.3).
 * Turns, not a tick or a timer, so that callers looping on microtasks alone (the in-memory
 * store) cannot starve the slot.
 */
const SETTLE_TURNS = 8;

async function settle(): Promise<void> {
  for (let i = 0; i < SETTLE_TURNS; i++) await Promise.resolve();
}

/** One caller's transaction waiting for a batch. */
interface Member {
  readonly compares: readonly Compare[];
  readonly success: readonly TxnOp[];
  readonly failure: readonly TxnOp[];
  /** Keys its compares and success gets look at (a batch sends no failure branch). */
  readonly reads: readonly string[];
  /** Keys its success puts and deletes change. */
  readonly writes: readonly string[];
  readonly bytes: number;
  /** When it was submitted (clock time). */
  readonly since: number;
  readonly resolve: (result: TxnResult) => void;
  readonly reject: (err: unknown) => void;
}

function member(
  since: number,
  compares: readonly Compare[],
  success: readonly TxnOp[],
  failure: readonly TxnOp[],
  resolve: (result: TxnResult) => void,
  reject: (err: unknown) => void,
): Member {
  const reads = compares.map((c) => c.key);
  const writes: string[] = [];
  let bytes = 0;
  for (const op of success) {
    bytes += op.key.length + (op.type === 'put' ? op.value.length : 0);
    if (op.type === 'get') reads.push(op.key);
    else writes.push(op.key);
  }
  for (const c of compares) bytes += c.key.length + (c.target === 'value' ? c.value.length : 0);
  return { compares, success, failure, reads, writes, bytes, since, resolve, reject };
}

/**
 * Group commit: write transactions issued while `maxInFlight` others are on their way to the
 * store go out together as one transaction when a slot frees (or after
 * {@link GROUP_COMMIT_STALL_MS}, whichever is first), so a master under load pays one
 * round trip (and one client-side encode and gRPC call, most of a call's CPU) for many enqueues,
 * claims and finishes. Idle, a transaction goes out at once, alone.
 *
 * Transparent to callers: only transactions that touch disjoint keys share a batch (none writes
 * a key another one compares, reads or writes), so the batch commits exactly what running them
 * one after the other at its revision would, and each caller gets its own branch's results and
 * the batch's revision (which its writes carry, as they would alone). A batch whose compares do
 * not all hold runs its members again one by one, each with its own failure branch: one
 * caller's lost race never fails another's, and neither does a put on a lease that is gone. A
 * batch that throws otherwise throws to every member (each would have had to treat a lost reply
 * as "may have committed" alone too). Read-only transactions never wait.
 */
export class GroupCommitKv implements Kv {
  readonly #kv: Kv;
  readonly #clock: Clock;
  readonly #maxInFlight: number;
  #inFlight = 0;
  #pending: Member[] = [];
  /** Whether a stall check is scheduled. */
  #watching = false;

  /**
   * `maxInFlight`: transactions (single or batched) on their way at once before batching starts.
   * `clock` times the stall bound.
   */
  constructor(kv: Kv, clock: Clock, options: { readonly maxInFlight?: number } = {}) {
    this.#kv = kv;
    this.#clock = clock;
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 1);
  }

  get: Kv['get'] = (key) => this.#kv.get(key);
  range: Kv['range'] = (prefix, options) => this.#kv.range(prefix, options);
  put: Kv['put'] = (key, value, options) => this.#kv.put(key, value, options);
  delete: Kv['delete'] = (key) => this.#kv.delete(key);
  deletePrefix: Kv['deletePrefix'] = (prefix) => this.#kv.deletePrefix(prefix);
  grant: Kv['grant'] = (ttlSecs, options) => this.#kv.grant(ttlSecs, options);
  watch: Kv['watch'] = (prefix, listener, options) => this.#kv.watch(prefix, listener, options);
  revision: Kv['revision'] = (probeKey) => this.#kv.revision(probeKey);
  close: Kv['close'] = () => this.#kv.close();

  txn(compares: readonly Compare[], success: readonly TxnOp[], failure: readonly TxnOp[] = []): Promise<TxnResult> {
    if (!success.some((op) => op.type !== 'get')) return this.#kv.txn(compares, success, failure);
    return new Promise((resolve, reject) => {
      this.#pending.push(member(this.#clock.now(), compares, success, failure, resolve, reject));
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#pending.length > 0) this.#launch();
    if (this.#pending.length > 0) this.#watchStall();
  }

  #launch(): void {
    const batch = this.#take();
    this.#inFlight++;
    void this.#send(batch)
      .finally(settle)
      .finally(() => {
        this.#inFlight--;
        this.#pump();
      });
  }

  /** Sends what waited {@link GROUP_COMMIT_STALL_MS} beside the calls ahead of it. One check at a time. */
  #watchStall(): void {
    const oldest = this.#pending[0];
    if (this.#watching || !oldest) return;
    this.#watching = true;
    const wait = Math.max(1, oldest.since + GROUP_COMMIT_STALL_MS - this.#clock.now());
    void this.#clock.sleep(wait).then(() => {
      this.#watching = false;
      const first = this.#pending[0];
      if (first && this.#clock.now() - first.since >= GROUP_COMMIT_STALL_MS) this.#launch();
      if (this.#pending.length > 0) this.#watchStall();
    });
  }

  /** The oldest pending member and every later one that fits beside it; the rest keep waiting. */
  #take(): Member[] {
    const batch: Member[] = [];
    const rest: Member[] = [];
    const touched = new Set<string>();
    const written = new Set<string>();
    let compares = 0;
    let ops = 0;
    let bytes = 0;
    for (const m of this.#pending) {
      const fits =
        batch.length === 0 ||
        (compares + m.compares.length <= MAX_OPS &&
          ops + m.success.length <= MAX_OPS &&
          bytes + m.bytes <= MAX_BYTES &&
          !m.writes.some((key) => touched.has(key)) &&
          !m.reads.some((key) => written.has(key)));
      if (!fits) {
        rest.push(m);
        continue;
      }
      batch.push(m);
      compares += m.compares.length;
      ops += m.success.length;
      bytes += m.bytes;
      for (const key of m.reads) touched.add(key);
      for (const key of m.writes) {
        touched.add(key);
        written.add(key);
      }
    }
    this.#pending = rest;
    return batch;
  }

  async #send(batch: readonly Member[]): Promise<void> {
    if (batch.length === 1) return this.#alone(batch[0]!);
    let res: TxnResult;
    try {
      res = await this.#kv.txn(
        batch.flatMap((m) => m.compares),
        batch.flatMap((m) => m.success),
      );
    } catch (err) {
      // etcd refused the batch for one member's sake (a put on a lease that is gone): nothing
      // committed, so each goes alone and only that one fails. Any other error leaves the
      // outcome unknown, and each caller must learn that.
      if (err instanceof LeaseNotFoundError || err instanceof StoreAccessDeniedError) {
        await Promise.all(batch.map((m) => this.#alone(m)));
        return;
      }
      for (const m of batch) m.reject(err);
      return;
    }
    if (!res.succeeded) {
      await Promise.all(batch.map((m) => this.#alone(m)));
      return;
    }
    let at = 0;
    for (const m of batch) {
      m.resolve({ succeeded: true, revision: res.revision, results: res.results.slice(at, at + m.success.length) });
      at += m.success.length;
    }
  }

  async #alone(m: Member): Promise<void> {
    try {
      m.resolve(await this.#kv.txn(m.compares, m.success, m.failure));
    } catch (err) {
      m.reject(err);
    }
  }
}
