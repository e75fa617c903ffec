import { type ClusterRecord, ClusterRecordSchema, encodeClusterRecord } from '../cluster.js';
import { ContentionError } from '../errors.js';
import type { KeyValue } from '../kv/port.js';
import { carryUnknownFields } from '../model.js';
import { decode } from './codec.js';
import type { StoreContext } from './context.js';
import type { AuditIntent } from '../audit.js';
import type { AuditStore, AuditWrite } from './audit-store.js';

/** Replacements of the record tried while other masters keep changing it. */
const CLUSTER_ATTEMPTS = 8;

/**
 * The cluster record at `P/cluster` (docs/ARCHITECTURE.md §2.8): which features the masters of
 * one prefix have switched on, and whether an operator holds them off. Every change is a swap
 * on the record's revision, keeping the fields a newer release wrote in it.
 */
export class ClusterStore {
  readonly #ctx: StoreContext;
  readonly #audit: AuditStore;

  /** `audit`: where an operator's change is recorded, in its transaction. */
  constructor(ctx: StoreContext, audit: AuditStore) {
    this.#ctx = ctx;
    this.#audit = audit;
  }

  /** The record; undefined while no master has written one (nothing switched on, nothing held). */
  async read(): Promise<ClusterRecord | undefined> {
    const found = await this.#ctx.kv.get(this.#ctx.keys.cluster);
    return found ? decode(ClusterRecordSchema, found) : undefined;
  }

  /**
   * Switches `names` on, stamped with this master and the clock; a name already on keeps its
   * stamp. Refused (returns the record unchanged) while `preserve_downgrade` is set. The caller
   * decides, from the live registrations, that every master understands them.
   */
  async enable(names: readonly string[]): Promise<ClusterRecord> {
    const { clock, masterId } = this.#ctx;
    return this.#update((prev) => {
      if (prev.preserve_downgrade) return undefined;
      const now = clock.now();
      const fresh = names.filter((n) => !prev.features.some((f) => f.name === n));
      if (fresh.length === 0) return undefined;
      return {
        ...prev,
        features: [...prev.features, ...fresh.map((name) => ({ name, enabled_at: now, enabled_by: masterId }))],
        updated_at: now,
        updated_by: masterId,
      };
    });
  }

  /**
   * Sets or clears `preserve_downgrade`, naming who did it, with `audit`'s entry in the same
   * transaction (none when it was already so: nothing commits); answers the record as it now stands.
   */
  async setPreserveDowngrade(value: boolean, by: string, audit?: AuditIntent): Promise<ClusterRecord> {
    const { clock } = this.#ctx;
    const outcome = value ? 'preserve_downgrade_set' : 'preserve_downgrade_cleared';
    return this.#update(
      (prev) =>
        prev.preserve_downgrade === value
          ? undefined
          : { ...prev, preserve_downgrade: value, updated_at: clock.now(), updated_by: by },
      () => this.#audit.write(audit, { outcome }),
      (write) => this.#audit.written(write),
    );
  }

  /**
   * Applies `change` to the record by compare-and-swap; `change` answers undefined for no change.
   * `audit` makes the entry each attempt puts beside the record; `written` hears the one that committed.
   */
  async #update(
    change: (prev: ClusterRecord) => ClusterRecord | undefined,
    audit?: () => AuditWrite,
    written?: (write: AuditWrite) => void,
  ): Promise<ClusterRecord> {
    const { kv, keys } = this.#ctx;
    const key = keys.cluster;
    let found: KeyValue | undefined = await kv.get(key);
    for (let attempt = 0; attempt < CLUSTER_ATTEMPTS; attempt++) {
      const prev = found ? decode(ClusterRecordSchema, found) : EMPTY;
      const next = change(prev);
      if (!next) return prev;
      const entry = audit?.();
      const res = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }],
        [{ type: 'put', key, value: encodeClusterRecord(carryUnknownFields(prev, next)) }, ...(entry?.ops ?? [])],
        [{ type: 'get', key }],
      );
      if (res.succeeded) {
        if (entry) written?.(entry);
        return next;
      }
      const current = res.results[0];
      found = current?.type === 'get' ? current.kv : undefined;
    }
    throw new ContentionError(`the cluster record kept changing: ${CLUSTER_ATTEMPTS} attempts failed`);
  }
}

const EMPTY: ClusterRecord = { features: [], preserve_downgrade: false, updated_at: 0, updated_by: '' };
