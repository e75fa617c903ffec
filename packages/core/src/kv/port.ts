/**
 * The Kv port: a small, etcd-shaped key-value interface that TaskStore logic is written
 * against once. {@link EtcdKv} and {@link MemoryKv} implement it and pass one contract suite.
 */

/** One stored key with its etcd-style revision metadata. */
export interface KeyValue {
  /** The key. */
  readonly key: string;
  /** The value (empty for keys-only reads). */
  readonly value: string;
  /** Revision at which the key was created (0 never occurs for a present key). */
  readonly createRevision: number;
  /** Revision of the last write to the key. */
  readonly modRevision: number;
  /** Number of writes since creation (1 after the first put). */
  readonly version: number;
  /** Lease id the key is attached to, or undefined. */
  readonly lease: string | undefined;
}

/** Options of {@link Kv.range}. */
export interface RangeOptions {
  /** Most keys to return; 0 or undefined = no limit. */
  readonly limit?: number;
  /** Return keys with empty values. */
  readonly keysOnly?: boolean;
  /** Return only the count. */
  readonly countOnly?: boolean;
  /** Start at this key (inclusive) instead of at the prefix; for paging. */
  readonly fromKey?: string;
  /** Stop before this key (exclusive); ascending ranges only. */
  readonly toKey?: string;
  /**
   * Walk keys in descending order (the page then ends at `fromKey`, inclusive). Note that etcd
   * reads the whole range to sort it descending: O(keys under the prefix), not O(limit).
   */
  readonly reverse?: boolean;
}

/** Result of {@link Kv.range}. */
export interface RangeResult {
  /** The keys read, in the requested order. */
  readonly kvs: readonly KeyValue[];
  /** Total number of keys under the prefix (in the `fromKey`/`toKey` window), ignoring `limit`. */
  readonly count: number;
  /** True when `limit` cut the result short. */
  readonly more: boolean;
  /** Store revision at which the read was served. */
  readonly revision: number;
}

/** A transaction guard. A missing key has version, createRevision and modRevision 0. */
export type Compare =
  | {
      readonly key: string;
      readonly target: 'version' | 'createRevision' | 'modRevision';
      readonly op: '==' | '!=' | '>' | '<';
      readonly value: number;
    }
  | {
      readonly key: string;
      readonly target: 'value';
      readonly op: '==' | '!=';
      readonly value: string;
    };

/** One operation inside a transaction branch. */
export type TxnOp =
  | { readonly type: 'put'; readonly key: string; readonly value: string; readonly lease?: string }
  | { readonly type: 'delete'; readonly key: string }
  | { readonly type: 'get'; readonly key: string };

/** Per-op result, aligned with the executed branch's ops. */
export type TxnOpResult =
  | { readonly type: 'put' }
  | { readonly type: 'delete'; readonly deleted: number }
  | { readonly type: 'get'; readonly kv: KeyValue | undefined };

/** Result of {@link Kv.txn}. */
export interface TxnResult {
  /** True when every compare held and the success branch ran. */
  readonly succeeded: boolean;
  /** Store revision after the transaction (its own revision when it wrote). */
  readonly revision: number;
  /** One result per op of the branch that ran. */
  readonly results: readonly TxnOpResult[];
}

/** A granted lease. Keys put with it vanish when it is revoked or expires. */
export interface Lease {
  /** The lease id, as a decimal string. */
  readonly id: string;
  /** The TTL it was granted with, in seconds. */
  readonly ttlSecs: number;
  /**
   * Aborts when the lease is known to be gone: it expired, the store said it is unknown, or
   * keepalives failed for longer than the TTL. Not aborted by {@link Lease.revoke}.
   */
  readonly lost: AbortSignal;
  /** Revokes the lease now, deleting its keys. Idempotent; an unknown lease is not an error. */
  revoke(): Promise<void>;
  /** Stops keepalives without revoking; the lease expires on its own. */
  release(): void;
}

/** Options of {@link Kv.grant}. */
export interface GrantOptions {
  /** Keep the lease alive every TTL/3 until revoked or released (default true). */
  readonly keepAlive?: boolean;
}

/** One change seen by a watch. */
export interface WatchEvent {
  /** A write (`put`) or a removal (`delete`, lease expiry included). */
  readonly type: 'put' | 'delete';
  /** The key. */
  readonly key: string;
  /** The new value (empty for deletes). */
  readonly value: string;
  /** Revision of this change. */
  readonly modRevision: number;
}

/** Options of {@link Kv.watch}. */
export interface WatchOptions {
  /** Deliver changes from this revision on (inclusive); default: changes after now. */
  readonly fromRevision?: number;
  /** Called with a `WatchCompactedError` or a store error; the watch is then dead. */
  readonly onError?: (err: Error) => void;
}

/** A live watch; events stop after {@link Watch.close}. */
export interface Watch {
  /** Stops the watch. */
  close(): Promise<void>;
}

/**
 * The key-value port. Every method may reject with `StoreUnavailableError` when the store cannot
 * be reached; no method hangs past its deadline.
 */
export interface Kv {
  /** The key, or undefined when absent. */
  get(key: string): Promise<KeyValue | undefined>;
  /** Keys under `prefix` in ascending key order (descending with `reverse`). */
  range(prefix: string, options?: RangeOptions): Promise<RangeResult>;
  /** Runs `success` if every compare holds, else `failure`, atomically. */
  txn(compares: readonly Compare[], success: readonly TxnOp[], failure?: readonly TxnOp[]): Promise<TxnResult>;
  /** Writes a key (optionally on a lease); returns the new revision. */
  put(key: string, value: string, options?: { readonly lease?: string }): Promise<{ revision: number }>;
  /** Deletes one key; returns how many were deleted (0 or 1). */
  delete(key: string): Promise<number>;
  /** Deletes every key under `prefix`; returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** Grants a lease of `ttlSecs` (≥ 1). */
  grant(ttlSecs: number, options?: GrantOptions): Promise<Lease>;
  /** Watches every key under `prefix`; `listener` gets each response's events in order. */
  watch(prefix: string, listener: (events: readonly WatchEvent[]) => void, options?: WatchOptions): Promise<Watch>;
  /**
   * The current store revision, read through a count-only get of `probeKey`. Pass a key inside
   * the prefix a least-privilege etcd role is granted (e.g. `Keys.prefix + '/'`): the default
   * key, `"\0"`, lies outside every prefix and needs read access to the whole keyspace.
   */
  revision(probeKey?: string): Promise<number>;
  /** Releases the client; outstanding leases stop being kept alive. */
  close(): Promise<void>;
}
