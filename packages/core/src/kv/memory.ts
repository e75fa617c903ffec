import { type Clock, systemClock } from '../clock.js';
import { ClosedError, LeaseNotFoundError, MaintdError, WatchCompactedError } from '../errors.js';
import type {
  Compare,
  GrantOptions,
  KeyValue,
  Kv,
  Lease,
  RangeOptions,
  RangeResult,
  TxnOp,
  TxnOpResult,
  TxnResult,
  Watch,
  WatchEvent,
  WatchOptions,
} from './port.js';
import { partitionPoint } from '../sorted-list.js';

/** etcd's default `--max-txn-ops`; mirrored so that code that passes here passes on etcd. */
const MAX_TXN_OPS = 128;

interface Entry {
  value: string;
  createRevision: number;
  modRevision: number;
  version: number;
  lease: string | undefined;
}

interface LeaseState {
  readonly id: string;
  readonly ttlSecs: number;
  expiresAt: number;
  readonly keys: Set<string>;
  readonly lost: AbortController;
}

interface Watcher {
  readonly prefix: string;
  readonly listener: (events: readonly WatchEvent[]) => void;
  closed: boolean;
}

/**
 * The reason the expiry timer is cut short when it is re-armed (every keepalive moves it). Given
 * explicitly because `abort()` without one builds a DOMException, stack trace included.
 */
const REARMED = new Error('lease expiry re-armed');

/** Shared state of one in-memory store; several {@link MemoryKv} clients may attach to it. */
class Backend {
  readonly clock: Clock;
  readonly historyLimit: number;
  revision = 1;
  compactRevision = 0;
  readonly entries = new Map<string, Entry>();
  sortedKeys: string[] = [];
  readonly leases = new Map<string, LeaseState>();
  nextLeaseId = 0x1000;
  readonly watchers = new Set<Watcher>();
  /** Committed changes, oldest first, for watches that start at an old revision. */
  readonly history: { revision: number; events: WatchEvent[] }[] = [];
  #expiryTimer: AbortController | undefined;
  #expiryAt = Infinity;
  /** Stored keys with a UTF-16 unit from 0xD800 up (see {@link isWide}). */
  #wideKeys = 0;
  closed = false;

  constructor(clock: Clock, historyLimit: number) {
    this.clock = clock;
    this.historyLimit = historyLimit;
  }

  // Keys are kept in UTF-8 byte order, as etcd orders them.
  #indexOf(key: string): number {
    const keys = this.sortedKeys;
    // While no stored key has a unit from 0xD800 up, the engine's UTF-16 comparison gives the
    // UTF-8 byte order for any `key` (where they first differ, a stored key's unit is a code point
    // below 0xD800 and `key`'s is either that too or encodes above it), several times faster.
    return this.#wideKeys === 0
      ? partitionPoint(keys, (k) => k < key)
      : partitionPoint(keys, (k) => compareKeys(k, key) < 0);
  }

  /** Index of the first key ≥ `key`. */
  lowerBound(key: string): number {
    return this.#indexOf(key);
  }

  /** Index past the keys that start with `prefix`, the first of which is at `start`. */
  prefixEnd(prefix: string, start: number): number {
    const last = prefix.charCodeAt(prefix.length - 1);
    // The prefix with its last unit raised by one is the least key above all that start with it,
    // as long as both units are below the surrogates (where unit order is byte order).
    if (last < 0xd7ff) return this.#indexOf(`${prefix.slice(0, -1)}${String.fromCharCode(last + 1)}`);
    let end = start;
    while (end < this.sortedKeys.length && this.sortedKeys[end]!.startsWith(prefix)) end++;
    return end;
  }

  expire(): void {
    const now = this.clock.now();
    const due = [...this.leases.values()].filter((l) => l.expiresAt <= now);
    for (const lease of due) {
      this.revokeLease(lease.id);
      lease.lost.abort(new LeaseNotFoundError(`lease ${lease.id} expired`));
    }
  }

  /** Re-arms the single timer that expires leases even when nobody calls in. */
  armExpiry(): void {
    let next = Infinity;
    for (const l of this.leases.values()) next = Math.min(next, l.expiresAt);
    if (next === this.#expiryAt) return;
    this.#expiryTimer?.abort(REARMED);
    this.#expiryTimer = undefined;
    this.#expiryAt = next;
    if (next === Infinity || this.closed) return;
    const ctl = new AbortController();
    this.#expiryTimer = ctl;
    this.clock.sleep(Math.max(0, next - this.clock.now()), ctl.signal).then(
      () => {
        if (ctl.signal.aborted) return;
        this.#expiryAt = Infinity;
        this.expire();
        this.armExpiry();
      },
      () => undefined,
    );
  }

  stopTimers(): void {
    this.#expiryTimer?.abort();
    this.#expiryTimer = undefined;
    this.#expiryAt = Infinity;
  }

  /** Applies writes as one revision and notifies watchers. */
  commit(
    writes: readonly ({ type: 'put'; key: string; value: string; lease?: string } | { type: 'delete'; key: string })[],
  ): {
    deleted: number[];
  } {
    const deleted: number[] = [];
    if (writes.length === 0) return { deleted };
    const rev = this.revision + 1;
    const events: WatchEvent[] = [];
    for (const w of writes) {
      if (w.type === 'put') {
        const prev = this.entries.get(w.key);
        if (prev?.lease) this.leases.get(prev.lease)?.keys.delete(w.key);
        const entry: Entry = {
          value: w.value,
          createRevision: prev ? prev.createRevision : rev,
          modRevision: rev,
          version: prev ? prev.version + 1 : 1,
          lease: w.lease,
        };
        if (!prev) {
          this.sortedKeys.splice(this.#indexOf(w.key), 0, w.key);
          if (isWide(w.key)) this.#wideKeys++;
        }
        this.entries.set(w.key, entry);
        if (w.lease) this.leases.get(w.lease)?.keys.add(w.key);
        events.push({ type: 'put', key: w.key, value: w.value, modRevision: rev });
        deleted.push(0);
      } else {
        const prev = this.entries.get(w.key);
        if (!prev) {
          deleted.push(0);
          continue;
        }
        if (prev.lease) this.leases.get(prev.lease)?.keys.delete(w.key);
        this.entries.delete(w.key);
        this.sortedKeys.splice(this.#indexOf(w.key), 1);
        if (isWide(w.key)) this.#wideKeys--;
        events.push({ type: 'delete', key: w.key, value: '', modRevision: rev });
        deleted.push(1);
      }
    }
    if (events.length === 0) return { deleted };
    this.revision = rev;
    this.history.push({ revision: rev, events });
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.shift();
      if (dropped) this.compactRevision = dropped.revision;
    }
    for (const w of this.watchers) this.#deliver(w, events);
    return { deleted };
  }

  #deliver(w: Watcher, events: readonly WatchEvent[]): void {
    const mine = events.filter((e) => e.key.startsWith(w.prefix));
    if (mine.length === 0) return;
    // Delivered asynchronously, in commit order, as a real watch stream would be.
    queueMicrotask(() => {
      if (!w.closed) w.listener(mine);
    });
  }

  replay(w: Watcher, fromRevision: number): void {
    for (const h of this.history) {
      if (h.revision >= fromRevision) this.#deliver(w, h.events);
    }
  }

  revokeLease(id: string): boolean {
    const lease = this.leases.get(id);
    if (!lease) return false;
    this.leases.delete(id);
    this.commit([...lease.keys].map((key) => ({ type: 'delete' as const, key })));
    return true;
  }
}

/**
 * Byte-order comparison of two keys (UTF-8), matching etcd's ordering; only its sign means
 * anything. Every range and write binary-searches the keys with it, so it compares UTF-16 units
 * in place while that gives the UTF-8 answer, and encodes only when it might not.
 */
function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Units below the surrogates are code points, and UTF-8 orders code points as numbers. From
    // 0xD800 up, unit order and byte order part (a pair encodes a code point above 0xFFFF, and a
    // lone surrogate is encoded as U+FFFD).
    if (x < 0xd800 && y < 0xd800) return x - y;
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  // One is a prefix of the other: its bytes are a prefix of the other's, or it ends in a lone
  // high surrogate (EF BF BD) where the other has a pair (F0–F4 …). The shorter is less either way.
  return a.length - b.length;
}

/** Whether a key has a UTF-16 unit from 0xD800 up, where unit order and UTF-8 byte order part. */
function isWide(key: string): boolean {
  return WIDE.test(key);
}

const WIDE = /[\uD800-\uFFFF]/;

function snapshot(key: string, e: Entry, keysOnly = false): KeyValue {
  return {
    key,
    value: keysOnly ? '' : e.value,
    createRevision: e.createRevision,
    modRevision: e.modRevision,
    version: e.version,
    lease: e.lease,
  };
}

/** Lets {@link MemoryKv.connect} hand its backend to a new client without widening the public options. */
const sharedBackends = new WeakMap<MemoryKvOptions, Backend>();

/** Options of {@link MemoryKv}. */
export interface MemoryKvOptions {
  /** Clock that drives lease expiry and keepalives (default: the system clock). */
  readonly clock?: Clock;
  /** Revisions of change history kept for watches from an old revision (default 10 000). */
  readonly historyLimit?: number;
}

/**
 * An in-memory Kv with etcd semantics: revisions, compare-and-swap transactions, leases that
 * expire on the injected clock, and watches. It is maintd's embedded default (a single master,
 * not durable) and the engine of deterministic simulations.
 *
 * {@link MemoryKv.connect} attaches another client to the same data, as a second process would
 * connect to the same etcd: closing a client stops its keepalives and watches only.
 */
export class MemoryKv implements Kv {
  readonly #b: Backend;
  readonly #keepAlives = new Set<AbortController>();
  readonly #watchers = new Set<Watcher>();
  #closed = false;

  constructor(options: MemoryKvOptions = {}) {
    this.#b = sharedBackends.get(options) ?? new Backend(options.clock ?? systemClock, options.historyLimit ?? 10_000);
  }

  /** Another client on the same data. */
  connect(): MemoryKv {
    const options: MemoryKvOptions = {};
    sharedBackends.set(options, this.#b);
    return new MemoryKv(options);
  }

  #enter(): Backend {
    const b = this.#b;
    if (this.#closed || b.closed) throw new ClosedError('kv client is closed');
    b.expire();
    return b;
  }

  /** {@inheritDoc Kv.get} */
  get(key: string): Promise<KeyValue | undefined> {
    try {
      const b = this.#enter();
      const e = b.entries.get(key);
      return Promise.resolve(e ? snapshot(key, e) : undefined);
    } catch (err) {
      return rejected(err);
    }
  }

  /** {@inheritDoc Kv.range} */
  range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    try {
      const b = this.#enter();
      const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
      const start = b.lowerBound(prefix);
      const end = b.prefixEnd(prefix, start);
      let lo = start;
      let hi = end;
      if (options.fromKey !== undefined) {
        if (options.reverse) {
          const i = b.lowerBound(options.fromKey);
          hi = Math.min(end, i < b.sortedKeys.length && b.sortedKeys[i] === options.fromKey ? i + 1 : i);
        } else {
          lo = Math.max(start, b.lowerBound(options.fromKey));
        }
      }
      if (options.toKey !== undefined && !options.reverse) hi = Math.min(hi, b.lowerBound(options.toKey));
      const count = Math.max(0, hi - lo);
      if (options.countOnly) {
        return Promise.resolve({ kvs: [], count, more: false, revision: b.revision });
      }
      const kvs: KeyValue[] = [];
      const take = Math.min(count, limit);
      for (let n = 0; n < take; n++) {
        const key = options.reverse ? b.sortedKeys[hi - 1 - n]! : b.sortedKeys[lo + n]!;
        kvs.push(snapshot(key, b.entries.get(key)!, options.keysOnly));
      }
      return Promise.resolve({ kvs, count, more: count > take, revision: b.revision });
    } catch (err) {
      return rejected(err);
    }
  }

  /** {@inheritDoc Kv.txn} */
  txn(compares: readonly Compare[], success: readonly TxnOp[], failure: readonly TxnOp[] = []): Promise<TxnResult> {
    try {
      const b = this.#enter();
      validateBranch(b, success);
      validateBranch(b, failure);
      if (compares.length > MAX_TXN_OPS) throw new MaintdError('too many operations in txn request');
      const ok = compares.every((c) => holds(b, c));
      const ops = ok ? success : failure;
      const results: TxnOpResult[] = [];
      const writes: ({ type: 'put'; key: string; value: string; lease?: string } | { type: 'delete'; key: string })[] =
        [];
      // etcd serves a txn's reads from the state before its own writes; ops are otherwise in order.
      for (const op of ops) {
        if (op.type === 'get') {
          const e = b.entries.get(op.key);
          results.push({ type: 'get', kv: e ? snapshot(op.key, e) : undefined });
        } else if (op.type === 'put') {
          writes.push(op);
          results.push({ type: 'put' });
        } else {
          writes.push(op);
          results.push({ type: 'delete', deleted: b.entries.has(op.key) ? 1 : 0 });
        }
      }
      b.commit(writes);
      b.armExpiry();
      return Promise.resolve({ succeeded: ok, revision: b.revision, results });
    } catch (err) {
      return rejected(err);
    }
  }

  /** {@inheritDoc Kv.put} */
  async put(key: string, value: string, options: { readonly lease?: string } = {}): Promise<{ revision: number }> {
    const res = await this.txn([], [{ type: 'put', key, value, ...(options.lease ? { lease: options.lease } : {}) }]);
    return { revision: res.revision };
  }

  /** {@inheritDoc Kv.delete} */
  async delete(key: string): Promise<number> {
    const res = await this.txn([], [{ type: 'delete', key }]);
    const r = res.results[0];
    return r?.type === 'delete' ? r.deleted : 0;
  }

  /** {@inheritDoc Kv.deletePrefix} */
  deletePrefix(prefix: string): Promise<number> {
    try {
      const b = this.#enter();
      const keys = b.sortedKeys.filter((k) => k.startsWith(prefix));
      b.commit(keys.map((key) => ({ type: 'delete' as const, key })));
      return Promise.resolve(keys.length);
    } catch (err) {
      return rejected(err);
    }
  }

  /** {@inheritDoc Kv.grant} */
  grant(ttlSecs: number, options: GrantOptions = {}): Promise<Lease> {
    try {
      const b = this.#enter();
      if (!Number.isInteger(ttlSecs) || ttlSecs < 1) {
        throw new MaintdError(`lease TTL must be a whole number of seconds ≥ 1, got ${ttlSecs}`);
      }
      const id = String(b.nextLeaseId++);
      const state: LeaseState = {
        id,
        ttlSecs,
        expiresAt: b.clock.now() + ttlSecs * 1000,
        keys: new Set(),
        lost: new AbortController(),
      };
      b.leases.set(id, state);
      b.armExpiry();
      const keepAlive = new AbortController();
      if (options.keepAlive ?? true) {
        this.#keepAlives.add(keepAlive);
        void this.#keepAliveLoop(b, state, keepAlive.signal);
      }
      const lease: Lease = {
        id,
        ttlSecs,
        lost: state.lost.signal,
        revoke: () => {
          keepAlive.abort();
          this.#keepAlives.delete(keepAlive);
          if (!b.closed) b.revokeLease(id);
          b.armExpiry();
          return Promise.resolve();
        },
        release: () => {
          keepAlive.abort();
          this.#keepAlives.delete(keepAlive);
        },
      };
      return Promise.resolve(lease);
    } catch (err) {
      return rejected(err);
    }
  }

  async #keepAliveLoop(b: Backend, state: LeaseState, signal: AbortSignal): Promise<void> {
    const period = Math.max(1, (state.ttlSecs * 1000) / 3);
    while (!signal.aborted) {
      try {
        await b.clock.sleep(period, signal);
      } catch {
        return;
      }
      b.expire();
      if (!b.leases.has(state.id)) return;
      state.expiresAt = b.clock.now() + state.ttlSecs * 1000;
      b.armExpiry();
    }
  }

  /** {@inheritDoc Kv.watch} */
  watch(prefix: string, listener: (events: readonly WatchEvent[]) => void, options: WatchOptions = {}): Promise<Watch> {
    try {
      const b = this.#enter();
      const w: Watcher = { prefix, listener, closed: false };
      if (options.fromRevision !== undefined && options.fromRevision <= b.revision) {
        if (options.fromRevision <= b.compactRevision) {
          const err = new WatchCompactedError(
            `required revision ${options.fromRevision} has been compacted (oldest available ${b.compactRevision + 1})`,
            { compactRevision: b.compactRevision },
          );
          queueMicrotask(() => options.onError?.(err));
          return Promise.resolve({ close: () => Promise.resolve() });
        }
        b.replay(w, options.fromRevision);
      }
      b.watchers.add(w);
      this.#watchers.add(w);
      return Promise.resolve({
        close: () => {
          w.closed = true;
          b.watchers.delete(w);
          this.#watchers.delete(w);
          return Promise.resolve();
        },
      });
    } catch (err) {
      return rejected(err);
    }
  }

  /** {@inheritDoc Kv.revision} */
  revision(_probeKey?: string): Promise<number> {
    try {
      return Promise.resolve(this.#enter().revision);
    } catch (err) {
      return rejected(err);
    }
  }

  /**
   * Drops change history up to `revision` (inclusive), as etcd compaction does: a later watch
   * from an older revision fails with `WatchCompactedError`.
   */
  compact(revision: number): void {
    const b = this.#b;
    while (b.history.length > 0 && b.history[0]!.revision <= revision) b.history.shift();
    b.compactRevision = Math.max(b.compactRevision, Math.min(revision, b.revision));
  }

  /** Stops this client's keepalives and watches; its leases then expire on their own. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    for (const k of this.#keepAlives) k.abort();
    this.#keepAlives.clear();
    for (const w of this.#watchers) {
      w.closed = true;
      this.#b.watchers.delete(w);
    }
    this.#watchers.clear();
    return Promise.resolve();
  }

  /** Closes every client of this data and stops its timers. */
  destroy(): void {
    const b = this.#b;
    b.closed = true;
    b.stopTimers();
    for (const l of b.leases.values()) l.lost.abort(new ClosedError('kv destroyed'));
    void this.close();
  }
}

function rejected(err: unknown): Promise<never> {
  return Promise.reject(err instanceof Error ? err : new Error(String(err)));
}

function validateBranch(b: Backend, ops: readonly TxnOp[]): void {
  if (ops.length > MAX_TXN_OPS) throw new MaintdError('too many operations in txn request');
  const written = new Set<string>();
  for (const op of ops) {
    if (op.type === 'get') continue;
    if (written.has(op.key)) throw new MaintdError('duplicate key given in txn request');
    written.add(op.key);
    if (op.type === 'put' && op.lease !== undefined && !b.leases.has(op.lease)) {
      throw new LeaseNotFoundError(`requested lease ${op.lease} not found`);
    }
  }
}

function holds(b: Backend, c: Compare): boolean {
  const e = b.entries.get(c.key);
  if (c.target === 'value') {
    // etcd: a value compare against a missing key is false, whatever the operator.
    if (!e) return false;
    return c.op === '==' ? e.value === c.value : e.value !== c.value;
  }
  const actual = !e
    ? 0
    : c.target === 'version'
      ? e.version
      : c.target === 'createRevision'
        ? e.createRevision
        : e.modRevision;
  switch (c.op) {
    case '==':
      return actual === c.value;
    case '!=':
      return actual !== c.value;
    case '>':
      return actual > c.value;
    case '<':
      return actual < c.value;
  }
}
