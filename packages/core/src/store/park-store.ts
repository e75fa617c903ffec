import { sanitizeError } from '../cooldown-policy.js';
import { ContentionError, ValidationError } from '../errors.js';
import { targetFromHex } from '../keys.js';
import {
  type ParkRecord,
  type TaskKind,
  ParkRecordSchema,
  TargetSchema,
  TaskKindSchema,
  carryUnknownFields,
  encodePark,
  isParked,
} from '../model.js';
import { decode, decodeOrNone, parseInput } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';
import { RESUME_BATCH, readHeld, resumeOps, resumePair } from './held.js';
import type { TimelineStore } from './timeline-store.js';
import type { Actor, Pair } from './operator-action.js';
import type { AuditIntent } from '../audit.js';
import type { AuditFields, AuditStore } from './audit-store.js';
import { swapInChunks } from './bulk-swap.js';
import type { KeyValue, TxnOp } from '../kv/port.js';

/** What a park's audit entry names. */
function auditFields(park: ParkRecord): AuditFields {
  return { kind: park.kind, target: park.target, reason: park.reason, until_ms: park.until_ms, outcome: 'parked' };
}

/** Longest `reason` and `by` kept on a park, in code points. */
const PARK_TEXT_MAX = 512;
/** Replacements of one park tried while other writers keep changing it. */
const PARK_ATTEMPTS = 8;

/** What an operator says when parking a (kind, target): see {@link TaskStore.park}. */
export interface ParkOptions {
  /** Why: 1–512 characters once control characters are stripped. */
  readonly reason: string;
  /** Who: e.g. `alice@10.0.0.7` (a token's name and the client address), or the client address. */
  readonly by: string;
  /** When the park lapses by itself (ms since the Unix epoch, in the future); null or absent: until released. */
  readonly untilMs?: number | null;
  /** The request to record in the audit trail, in the park's transaction (docs/ARCHITECTURE.md §2.9). */
  readonly audit?: AuditIntent;
}

/**
 * Operators' parks (docs/ARCHITECTURE.md §2.7): records the sweeps consult beside the cooldowns, written and
 * deleted only by an operator. Unlike a cooldown record a park has no lease and no policy: it
 * is a decision, and nothing but a release (or its own `until_ms`) ends it.
 */
export class ParkStore {
  readonly #ctx: StoreContext;
  readonly #timeline: TimelineStore;
  readonly #audit: AuditStore;

  /** `timeline`, `audit`: every park and release is recorded there, in its own transaction. */
  constructor(ctx: StoreContext, timeline: TimelineStore, audit: AuditStore) {
    this.#ctx = ctx;
    this.#timeline = timeline;
    this.#audit = audit;
  }

  /** Writes (or replaces) the park of (kind, target), stamped with the clock's now. */
  async park(kind: TaskKind, target: string, options: ParkOptions): Promise<ParkRecord> {
    const { kv } = this.#ctx;
    const record = this.#record(kind, target, options);
    const key = this.#ctx.keys.parked(record.kind, record.target);
    // A replacement reads the park it replaces and swaps it on its revision: the fields a newer
    // release wrote in it are kept (docs/ARCHITECTURE.md §2.1), and a park written meanwhile is
    // not overwritten with the fields of the one read before it.
    let found = await kv.get(key);
    for (let attempt = 0; attempt < PARK_ATTEMPTS; attempt++) {
      const { next, ops } = this.#parkOps(record, found);
      const audit = this.#audit.write(options.audit, auditFields(record));
      const res = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }],
        [...ops, ...audit.ops],
        [{ type: 'get', key }],
      );
      if (res.succeeded) {
        void this.#timeline.afterWrite(record.kind, record.target);
        this.#audit.written(audit);
        return next;
      }
      const current = res.results[0];
      found = current?.type === 'get' ? current.kv : undefined;
    }
    throw new ContentionError(`park of ${record.kind} '${record.target}' contended past ${PARK_ATTEMPTS} attempts`);
  }

  /**
   * Parks every pair of `pairs` with one reason, each as {@link ParkStore.park} does (its own
   * `parked` event), in chunks of up to 50 a transaction, and records the whole action as one
   * audit entry whose count grows in each chunk's transaction (docs/ARCHITECTURE.md §2.9).
   * `onParked` hears each park as its chunk commits. Every pair is validated before any is parked.
   */
  async parkMany(
    pairs: readonly Pair[],
    options: ParkOptions,
    onParked?: (park: ParkRecord) => void,
  ): Promise<ParkRecord[]> {
    const records = pairs.map((p) => this.#record(p.kind, p.target, options));
    const parked: ParkRecord[] = records.map((r) => r);
    const [first] = records;
    // One entry for the whole action: it names the filter (the intent's), not each store.
    const chain =
      first && this.#audit.chain(options.audit, { reason: first.reason, until_ms: first.until_ms, outcome: 'parked' });
    try {
      await swapInChunks(
        this.#ctx,
        records.map((record, i) => ({
          key: this.#ctx.keys.parked(record.kind, record.target),
          ops: (found) => {
            const { next, ops } = this.#parkOps(record, found);
            parked[i] = next;
            return ops;
          },
        })),
        chain,
        (indexes) => {
          for (const i of indexes) {
            const park = parked[i]!;
            void this.#timeline.afterWrite(park.kind, park.target);
            onParked?.(park);
          }
        },
      );
    } finally {
      chain?.finish();
    }
    return parked;
  }

  /** The park `options` ask for on (kind, target), validated, stamped with the clock's now. */
  #record(kind: TaskKind, target: string, options: ParkOptions): ParkRecord {
    const k = parseInput(TaskKindSchema, kind, 'kind');
    const t = parseInput(TargetSchema, target, 'target');
    // Shown verbatim by the dashboard: the same sanitising as a worker's error text.
    const reason = sanitizeError(String(options.reason), PARK_TEXT_MAX);
    if (reason.length === 0) {
      throw new ValidationError('invalid reason: must contain text other than control characters', {
        field: 'reason',
      });
    }
    const by = sanitizeError(String(options.by), PARK_TEXT_MAX);
    if (by.length === 0) throw new ValidationError('invalid by: must name who parks', { field: 'by' });
    const now = this.#ctx.clock.now();
    const untilMs = options.untilMs ?? null;
    if (untilMs !== null && (!Number.isSafeInteger(untilMs) || untilMs <= now)) {
      throw new ValidationError('invalid untilMs: must be a time in the future (ms since the Unix epoch)', {
        field: 'untilMs',
      });
    }
    return { kind: k, target: t, reason, by, parked_at_ms: now, until_ms: untilMs };
  }

  /** The put of `record` over the park as `found` (keeping a newer release's fields), and its `parked` event. */
  #parkOps(record: ParkRecord, found: KeyValue | undefined): { next: ParkRecord; ops: TxnOp[] } {
    // An unreadable park reads as none: the replacement overwrites it.
    const next = carryUnknownFields(decodeOrNone(ParkRecordSchema, found), record);
    const { kind, target, by, reason, until_ms } = record;
    const timeline = this.#timeline.ops(kind, target, [{ type: 'parked', by, reason, until_ms }]);
    return {
      next,
      ops: [{ type: 'put', key: this.#ctx.keys.parked(kind, target), value: encodePark(next) }, ...timeline.ops],
    };
  }

  /**
   * Releases the park of (kind, target), lapsed or not, in one transaction with its `released`
   * event and the return of the tasks it held to their queue (their FIFO places kept), guarded on
   * the park and the held records as read. False, and nothing written, when there was no park.
   */
  async unpark(kind: TaskKind, target: string, actor?: Actor): Promise<boolean> {
    const { kv, keys } = this.#ctx;
    const key = keys.parked(kind, target);
    for (let attempt = 0; attempt < PARK_ATTEMPTS; attempt++) {
      const found = await kv.get(key);
      if (!found) return false;
      const held = await readHeld(this.#ctx, kind, target);
      const first = { tasks: held.tasks.slice(0, RESUME_BATCH), stray: held.stray };
      const resume = resumeOps(this.#ctx, kind, target, first);
      const timeline = this.#timeline.ops(kind, target, [{ type: 'released', ...(actor ? { by: actor.by } : {}) }]);
      const audit = this.#audit.write(actor?.audit, { kind, target, outcome: 'released' });
      const res = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: found.modRevision }, ...resume.compares],
        [{ type: 'delete', key }, ...timeline.ops, ...resume.ops, ...audit.ops],
      );
      if (res.succeeded) {
        void this.#timeline.afterWrite(kind, target);
        this.#audit.written(audit);
        // Within etcd's 128 operations a transaction: the rest go back in batches, the park gone.
        if (held.tasks.length > RESUME_BATCH) await resumePair(this.#ctx, kind, target);
        return true;
      }
    }
    throw new ContentionError(`release of ${kind} '${target}' contended past ${PARK_ATTEMPTS} attempts`);
  }

  async getPark(kind: TaskKind, target: string): Promise<ParkRecord | undefined> {
    const found = await this.#ctx.kv.get(this.#ctx.keys.parked(kind, target));
    return found ? decode(ParkRecordSchema, found) : undefined;
  }

  async listParks(options: { readonly kind?: TaskKind }): Promise<ParkRecord[]> {
    const out: ParkRecord[] = [];
    for await (const found of scan(this.#ctx.kv, this.#ctx.keys.parkedPrefix(options.kind))) {
      out.push(decode(ParkRecordSchema, found));
    }
    return out;
  }

  async parkedTargets(kind: TaskKind, nowMs = this.#ctx.clock.now()): Promise<Set<string>> {
    const prefix = this.#ctx.keys.parkedPrefix(kind);
    const out = new Set<string>();
    for await (const found of scan(this.#ctx.kv, prefix)) {
      if (isParked(decode(ParkRecordSchema, found), nowMs)) out.add(targetFromHex(found.key.slice(prefix.length)));
    }
    return out;
  }
}
