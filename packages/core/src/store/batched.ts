import type { Kv, TxnOp, TxnOpResult } from '../kv/port.js';

/** Operations per transaction: within etcd's limit of 128 (`--max-txn-ops`). */
const TXN_BATCH = 100;

/**
 * Runs `ops` as unconditional transactions of at most {@link TXN_BATCH} operations, one after
 * another, and returns their results in order. Not atomic as a whole: for writes a partial run is
 * harmless (stats rows, scan results, deletions of pruned tasks) and for reads each key stands alone.
 */
export async function txnInBatches(kv: Kv, ops: readonly TxnOp[]): Promise<TxnOpResult[]> {
  const results: TxnOpResult[] = [];
  for (let i = 0; i < ops.length; i += TXN_BATCH) {
    results.push(...(await kv.txn([], ops.slice(i, i + TXN_BATCH))).results);
  }
  return results;
}

/** Deletes `keys` in transactions of at most {@link TXN_BATCH}; returns how many existed. */
export async function deleteInBatches(kv: Kv, keys: readonly string[]): Promise<number> {
  let deleted = 0;
  const ops = keys.map((key) => ({ type: 'delete' as const, key }));
  for (const r of await txnInBatches(kv, ops)) if (r.type === 'delete') deleted += r.deleted;
  return deleted;
}
