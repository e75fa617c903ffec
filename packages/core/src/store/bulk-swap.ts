import { ContentionError, ValidationError } from '../errors.js';
import type { Compare, KeyValue, TxnOp } from '../kv/port.js';
import type { AuditChain } from './audit-store.js';
import type { StoreContext } from './context.js';

/**
 * Stores a bulk transaction acts on. Each costs two operations (its record, its timeline event)
 * and a compare, plus the audit entry's put and guard: 101 of etcd's 128 a branch.
 */
const BULK_CHUNK = 50;
/** Tries of one chunk while other writers keep changing its records. */
const CHUNK_ATTEMPTS = 8;

/** One store of a bulk action. */
export interface BulkItem {
  /** The record the action swaps, guarded on its revision as read. */
  readonly key: string;
  /** The ops that act on the record as `found`; undefined when there is nothing to do. */
  ops(found: KeyValue | undefined): TxnOp[] | undefined;
}

/**
 * Acts on `items` (docs/ARCHITECTURE.md §2.9) chunk after chunk, each chunk one transaction
 * guarded on every record it changes as read, and on the bulk action's audit entry: `audit`
 * records how many committed in that same transaction, so the entry's count is exactly what
 * committed, whenever the caller stops. A chunk whose records changed meanwhile is decided again
 * on what its failed transaction read. `committed` hears each chunk's items as it commits.
 * Answers, per item, whether it committed.
 */
export async function swapInChunks(
  ctx: StoreContext,
  items: readonly BulkItem[],
  audit: AuditChain | undefined,
  committed: (indexes: readonly number[]) => void,
): Promise<boolean[]> {
  const { kv } = ctx;
  // etcd refuses a transaction that names a key twice: a store named twice is a caller's mistake.
  if (new Set(items.map((item) => item.key)).size !== items.length) {
    throw new ValidationError('invalid pairs: a bulk action names the same store twice', { field: 'pairs' });
  }
  const done = items.map(() => false);
  for (let start = 0; start < items.length; start += BULK_CHUNK) {
    const chunk = items.slice(start, start + BULK_CHUNK);
    const read = await kv.txn(
      [],
      chunk.map((item) => ({ type: 'get', key: item.key })),
    );
    const found = read.results.map((r) => (r.type === 'get' ? r.kv : undefined));
    let settled = false;
    for (let attempt = 0; attempt < CHUNK_ATTEMPTS && !settled; attempt++) {
      const acting: number[] = [];
      const compares: Compare[] = [];
      const ops: TxnOp[] = [];
      chunk.forEach((item, i) => {
        const itemOps = item.ops(found[i]);
        if (!itemOps) return;
        acting.push(i);
        compares.push({ key: item.key, target: 'modRevision', op: '==', value: found[i]?.modRevision ?? 0 });
        ops.push(...itemOps);
      });
      if (acting.length === 0) {
        settled = true;
        break;
      }
      const link = audit?.next(acting.length);
      const res = await kv.txn(
        link ? [...compares, link.compare] : compares,
        link ? [...ops, link.op] : ops,
        acting.map((i) => ({ type: 'get', key: chunk[i]!.key })),
      );
      if (res.succeeded) {
        audit?.committed(acting.length);
        for (const i of acting) done[start + i] = true;
        committed(acting.map((i) => start + i));
        settled = true;
        break;
      }
      acting.forEach((i, j) => {
        const r = res.results[j];
        found[i] = r?.type === 'get' ? r.kv : undefined;
      });
    }
    if (!settled) throw new ContentionError(`a bulk action's records kept changing: ${CHUNK_ATTEMPTS} attempts failed`);
  }
  return done;
}
