import { Etcd3 } from 'etcd3';
import { LeaseNotFoundError, MaintdError } from '../errors.js';
import { EtcdCalls } from './etcd-calls.js';
import { DEFAULT_CALL_TIMEOUT_MS, etcdClientConfig } from './etcd-client-config.js';
import type { EtcdKvOptions } from './etcd-options.js';
import { EtcdWatches } from './etcd-watches.js';
import { fromEtcd, fromResponseOp, prefixEnd, toCompare, toRequestOp } from './etcd-wire.js';
import type {
  Compare,
  GrantOptions,
  KeyValue,
  Kv,
  Lease,
  RangeOptions,
  RangeResult,
  TxnOp,
  TxnResult,
  Watch,
  WatchEvent,
  WatchOptions,
} from './port.js';

/**
 * The Kv port over a real etcd (v3 API, through the `etcd3` client). Every unary call carries a
 * deadline; transport failures, deadlines and the client's open circuit all surface as one
 * {@link StoreUnavailableError}, so callers handle "etcd is not answering" in one place.
 */
export class EtcdKv implements Kv {
  readonly #calls: EtcdCalls;
  readonly #client: Etcd3;
  readonly #watches: EtcdWatches;
  readonly #leases = new Set<{ release(): void }>();

  constructor(options: EtcdKvOptions) {
    if (options.endpoints.length === 0) throw new MaintdError('EtcdKv needs at least one endpoint');
    const config = etcdClientConfig(options);
    this.#calls = new EtcdCalls(options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    this.#client = new Etcd3(config);
    this.#watches = new EtcdWatches(config, this.#calls);
  }

  /** {@inheritDoc Kv.get} */
  async get(key: string): Promise<KeyValue | undefined> {
    const res = await this.#call(() => this.#client.kv.range({ key: Buffer.from(key) }));
    const kv = res.kvs[0];
    return kv ? fromEtcd(kv) : undefined;
  }

  /** {@inheritDoc Kv.range} */
  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    const p = Buffer.from(prefix);
    let key = p;
    let end = prefixEnd(p);
    if (options.fromKey !== undefined) {
      if (options.reverse) end = Buffer.concat([Buffer.from(options.fromKey), Buffer.from([0])]);
      else key = Buffer.from(options.fromKey);
    }
    if (options.toKey !== undefined && !options.reverse && Buffer.compare(Buffer.from(options.toKey), end) < 0) {
      end = Buffer.from(options.toKey);
    }
    const res = await this.#call(() =>
      this.#client.kv.range({
        key,
        range_end: end,
        ...(options.limit ? { limit: options.limit } : {}),
        ...(options.keysOnly ? { keys_only: true } : {}),
        ...(options.countOnly ? { count_only: true } : {}),
        ...(options.reverse ? { sort_order: 'Descend' as const, sort_target: 'Key' as const } : {}),
      }),
    );
    return {
      kvs: (res.kvs ?? []).map((kv) => fromEtcd(kv, options.keysOnly)),
      count: Number(res.count),
      more: Boolean(res.more),
      revision: Number(res.header.revision),
    };
  }

  /** {@inheritDoc Kv.txn} */
  async txn(
    compares: readonly Compare[],
    success: readonly TxnOp[],
    failure: readonly TxnOp[] = [],
  ): Promise<TxnResult> {
    const res = await this.#call(() =>
      this.#client.kv.txn({
        compare: compares.map(toCompare),
        success: success.map(toRequestOp),
        failure: failure.map(toRequestOp),
      }),
    );
    const ops = res.succeeded ? success : failure;
    return {
      succeeded: Boolean(res.succeeded),
      revision: Number(res.header.revision),
      results: ops.map((op, i) => fromResponseOp(op, res.responses?.[i])),
    };
  }

  /** {@inheritDoc Kv.put} */
  async put(key: string, value: string, options: { readonly lease?: string } = {}): Promise<{ revision: number }> {
    const res = await this.#call(() =>
      this.#client.kv.put({
        key: Buffer.from(key),
        value: Buffer.from(value),
        ...(options.lease ? { lease: options.lease } : {}),
      }),
    );
    return { revision: Number(res.header.revision) };
  }

  /** {@inheritDoc Kv.delete} */
  async delete(key: string): Promise<number> {
    const res = await this.#call(() => this.#client.kv.deleteRange({ key: Buffer.from(key) }));
    return Number(res.deleted);
  }

  /** {@inheritDoc Kv.deletePrefix} */
  async deletePrefix(prefix: string): Promise<number> {
    const p = Buffer.from(prefix);
    const res = await this.#call(() => this.#client.kv.deleteRange({ key: p, range_end: prefixEnd(p) }));
    return Number(res.deleted);
  }

  /** {@inheritDoc Kv.grant} */
  async grant(ttlSecs: number, options: GrantOptions = {}): Promise<Lease> {
    if (!Number.isInteger(ttlSecs) || ttlSecs < 1) {
      throw new MaintdError(`lease TTL must be a whole number of seconds ≥ 1, got ${ttlSecs}`);
    }
    const keepAlive = options.keepAlive ?? true;
    const lease = this.#client.lease(ttlSecs, { autoKeepAlive: keepAlive });
    const lost = new AbortController();
    const handle = { release: () => lease.release() };
    lease.on('lost', (err) => {
      this.#leases.delete(handle);
      lost.abort(new LeaseNotFoundError('lease lost', { cause: err }));
    });
    const id = await this.#call(() => lease.grant());
    // Only keepalives need stopping at close. A lease left to expire by itself (a cooldown
    // record's, one per failure, never revoked once used) kept here would be held for the life of
    // the process: docs/ARCHITECTURE.md §3.6.
    if (keepAlive) this.#leases.add(handle);
    return {
      id,
      ttlSecs,
      lost: lost.signal,
      revoke: async () => {
        this.#leases.delete(handle);
        try {
          await this.#call(() => lease.revoke());
        } catch (err) {
          if (!(err instanceof LeaseNotFoundError)) throw err;
        }
      },
      release: () => {
        this.#leases.delete(handle);
        lease.release();
      },
    };
  }

  /** {@inheritDoc Kv.watch} */
  watch(prefix: string, listener: (events: readonly WatchEvent[]) => void, options: WatchOptions = {}): Promise<Watch> {
    return this.#watches.watch(prefix, listener, options);
  }

  /** {@inheritDoc Kv.revision} */
  async revision(probeKey?: string): Promise<number> {
    const key = probeKey === undefined ? Buffer.from([0]) : Buffer.from(probeKey);
    const res = await this.#call(() => this.#client.kv.range({ key, count_only: true }));
    return Number(res.header.revision);
  }

  /** Compacts etcd's history up to `revision` (for tests of watch re-sync). */
  async compact(revision: number): Promise<void> {
    await this.#call(() => this.#client.kv.compact({ revision, physical: true }));
  }

  /** {@inheritDoc Kv.close} */
  async close(): Promise<void> {
    for (const l of this.#leases) l.release();
    this.#leases.clear();
    await this.#watches.close();
    this.#client.close();
  }

  #call<T>(fn: () => Promise<T>): Promise<T> {
    return this.#calls.run(fn);
  }
}
