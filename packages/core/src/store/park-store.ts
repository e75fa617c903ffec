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
import type { Actor } from './cooldown-store.js';

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
}

/**
 * Operators' parks (docs/ARCHITECTURE.md §2.7): records the sweeps consult beside the cooldowns, written and
 * deleted only by an operator. Unlike a cooldown record a park has no lease and no policy: it
 * is a decision, and nothing but a release (or its own `until_ms`) ends it.
 */
export class ParkStore {
  readonly #ctx: StoreContext;
  readonly #timeline: TimelineStore;

  /** `timeline`: every park and release is recorded there, in its own transaction. */
  constructor(ctx: StoreContext, timeline: TimelineStore) {
    this.#ctx = ctx;
    this.#timeline = timeline;
  }

  /** Writes (or replaces) the park of (kind, target), stamped with the clock's now. */
  async park(kind: TaskKind, target: string, options: ParkOptions): Promise<ParkRecord> {
    const { kv, keys, clock } = this.#ctx;
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
    const now = clock.now();
    const untilMs = options.untilMs ?? null;
    if (untilMs !== null && (!Number.isSafeInteger(untilMs) || untilMs <= now)) {
      throw new ValidationError('invalid untilMs: must be a time in the future (ms since the Unix epoch)', {
        field: 'untilMs',
      });
    }
    const record: ParkRecord = { kind: k, target: t, reason, by, parked_at_ms: now, until_ms: untilMs };
    const key = keys.parked(k, t);
    // A replacement reads the park it replaces and swaps it on its revision: the fields a newer
    // release wrote in it are kept (docs/ARCHITECTURE.md §2.1), and a park written meanwhile is
    // not overwritten with the fields of the one read before it.
    let found = await kv.get(key);
    for (let attempt = 0; attempt < PARK_ATTEMPTS; attempt++) {
      // An unreadable park reads as none: the replacement overwrites it.
      const next = carryUnknownFields(decodeOrNone(ParkRecordSchema, found), record);
      const timeline = this.#timeline.ops(k, t, [{ type: 'parked', by, reason, until_ms: untilMs }]);
      const res = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }],
        [{ type: 'put', key, value: encodePark(next) }, ...timeline.ops],
        [{ type: 'get', key }],
      );
      if (res.succeeded) {
        void this.#timeline.afterWrite(k, t);
        return next;
      }
      const current = res.results[0];
      found = current?.type === 'get' ? current.kv : undefined;
    }
    throw new ContentionError(`park of ${k} '${t}' contended past ${PARK_ATTEMPTS} attempts`);
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
      const res = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: found.modRevision }, ...resume.compares],
        [{ type: 'delete', key }, ...timeline.ops, ...resume.ops],
      );
      if (res.succeeded) {
        void this.#timeline.afterWrite(kind, target);
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
