import { type AuditEntry, AuditEntrySchema, type AuditIntent, encodeAuditEntry } from '../audit.js';
import { sanitizeError } from '../cooldown-policy.js';
import { createIdGenerator } from '../ids.js';
import type { Compare, TxnOp } from '../kv/port.js';
import type { TaskKind } from '../model.js';
import { deleteInBatches } from './batched.js';
import { decode, idTime } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';

/** Longest text (who, client, route, reason) an entry keeps, in code points. */
const AUDIT_TEXT_MAX = 512;
/** Doomed keys a prune holds before deleting them (in transactions within etcd's limit). */
const PRUNE_BATCH = 1_000;
/** Keys read per page by the prune (keys only). */
const PRUNE_PAGE = 5_000;
/** Entries read per page by a filtered read, newest first. */
const READ_PAGE = 500;

/** How long, and how much, the audit trail keeps (docs/ARCHITECTURE.md §2.9). */
export interface AuditLimits {
  /** Entries kept; the oldest beyond it are deleted. */
  readonly limit: number;
  /** Entries older than this are deleted (ms); 0: the count alone bounds the trail. */
  readonly ttlMs: number;
}

/** What the store knows of an action it records: what it named and what committed. */
export interface AuditFields {
  /** The kind the action named, if it named one. */
  readonly kind?: TaskKind;
  /** The store the action named, if it named one. */
  readonly target?: string;
  /** The task it queued or ran, if any. */
  readonly task_id?: string;
  /** The operator's words (a park). */
  readonly reason?: string;
  /** End of a park (null: until released), in milliseconds since the Unix epoch. */
  readonly until_ms?: number | null;
  /** What committed, in a word: `queued`, `promoted`, `parked`, `reset`, `released`, … */
  readonly outcome: string;
}

/** A page of {@link AuditTrail.read}: entries newest first, and the cursor of the next page. */
export interface AuditPage {
  /** This page's entries, newest first. */
  readonly entries: AuditEntry[];
  /** The id to pass as `cursor` for the next (older) page; absent on the last page. */
  readonly next?: string;
}

/** A read of the audit trail: newest first, optionally filtered (every filter must match). */
export interface AuditQuery {
  /** Most entries (at least 1). */
  readonly limit: number;
  /** Only entries older than this entry id (the `next` of the previous page). */
  readonly cursor?: string;
  /** Only entries of this token or certificate name (or `anonymous`). */
  readonly who?: string;
  /** Only entries of this action, e.g. `cooldown.park`. */
  readonly action?: string;
  /** Only entries that named this kind. */
  readonly kind?: string;
  /** Only entries that named this store. */
  readonly target?: string;
}

/** What a {@link TaskStore} offers of the audit trail: reading it, and its prune. */
export interface AuditTrail {
  /** Entries newest first, filtered, in pages. */
  read(query: AuditQuery): Promise<AuditPage>;
  /** Deletes the entries past the TTL and the oldest beyond the limit; returns how many. */
  prune(): Promise<number>;
}

/** An entry to put in a transaction: its op (none without an intent), and the entry as it commits. */
export interface AuditWrite {
  readonly ops: TxnOp[];
  readonly entry?: AuditEntry;
  readonly intent?: AuditIntent;
}

/**
 * The one entry of a bulk action (docs/ARCHITECTURE.md §2.9): created in the transaction of its
 * first chunk of stores and rewritten, its `count` grown, in each later chunk's, each guarded on
 * the entry's version. So its count is exactly what committed, even when the master dies midway,
 * and a transaction whose reply was lost cannot be counted twice: the next one's guard fails.
 */
export class AuditChain {
  readonly #key: string;
  #entry: AuditEntry;
  #version = 0;
  readonly #intent: AuditIntent;

  constructor(key: string, entry: AuditEntry, intent: AuditIntent) {
    this.#key = key;
    this.#entry = entry;
    this.#intent = intent;
  }

  /** The entry as last committed (count 0 before the first commit). */
  get entry(): AuditEntry {
    return this.#entry;
  }

  /** The guard and the put that record `more` stores committed in the caller's transaction. */
  next(more: number): { compare: Compare; op: TxnOp } {
    const entry = { ...this.#entry, count: (this.#entry.count ?? 0) + more };
    return {
      compare: { key: this.#key, target: 'version', op: '==', value: this.#version },
      op: { type: 'put', key: this.#key, value: encodeAuditEntry(entry) },
    };
  }

  /** The transaction carrying {@link AuditChain.next}(`more`) committed. */
  committed(more: number): void {
    this.#entry = { ...this.#entry, count: (this.#entry.count ?? 0) + more };
    this.#version++;
  }

  /** The action is over: its writer logs the entry, if anything committed. */
  finish(): void {
    if (this.#version > 0) this.#intent.written?.(this.#entry);
  }
}

/**
 * The audit trail (docs/ARCHITECTURE.md §2.9): one key per operator action under `P/audit/`,
 * named by a UUIDv7, so key order is time order. Writers put an entry in the transaction of the
 * mutation it records ({@link AuditStore.write}, {@link AuditStore.chain}); a periodic prune
 * bounds the trail by count and age, from keys alone.
 */
export class AuditStore implements AuditTrail {
  readonly #ctx: StoreContext;
  readonly #limits: AuditLimits;
  readonly #newId: () => string;

  constructor(ctx: StoreContext, limits: AuditLimits) {
    this.#ctx = ctx;
    this.#limits = limits;
    this.#newId = createIdGenerator(ctx.clock, ctx.random);
  }

  /** The entry `intent` and `fields` describe, stamped with a new id and the clock's now. */
  #entry(intent: AuditIntent, fields: AuditFields): AuditEntry {
    const text = (s: string): string => sanitizeError(s, AUDIT_TEXT_MAX) || '?';
    const entry: AuditEntry = {
      id: this.#newId(),
      at_ms: this.#ctx.clock.now(),
      who: text(intent.who),
      client: text(intent.client),
      action: intent.action,
      route: text(intent.route),
      ...(fields.kind !== undefined ? { kind: fields.kind } : {}),
      ...(fields.target !== undefined ? { target: fields.target } : {}),
      ...(fields.task_id !== undefined ? { task_id: fields.task_id } : {}),
      ...(intent.filter !== undefined ? { filter: intent.filter } : {}),
      ...(fields.reason !== undefined ? { reason: sanitizeError(fields.reason, AUDIT_TEXT_MAX) } : {}),
      ...(fields.until_ms !== undefined ? { until_ms: fields.until_ms } : {}),
      outcome: fields.outcome,
      ...(intent.matched !== undefined ? { matched: intent.matched } : {}),
      master_id: this.#ctx.masterId,
    };
    return entry;
  }

  /** The put of one action's entry, for the transaction of its mutation; no op without an intent. */
  write(intent: AuditIntent | undefined, fields: AuditFields): AuditWrite {
    if (!intent) return { ops: [] };
    const entry = this.#entry(intent, fields);
    return {
      entry,
      intent,
      ops: [{ type: 'put', key: this.#ctx.keys.audit(entry.id), value: encodeAuditEntry(entry) }],
    };
  }

  /** The transaction carrying {@link AuditStore.write}'s ops committed: its writer logs the entry. */
  written(write: AuditWrite): void {
    if (write.entry) write.intent?.written?.(write.entry);
  }

  /** The entry of a bulk action, grown chunk by chunk ({@link AuditChain}); none without an intent. */
  chain(intent: AuditIntent | undefined, fields: AuditFields): AuditChain | undefined {
    if (!intent) return undefined;
    const entry = { ...this.#entry(intent, fields), count: 0 };
    return new AuditChain(this.#ctx.keys.audit(entry.id), entry, intent);
  }

  async read(query: AuditQuery): Promise<AuditPage> {
    const { kv, keys } = this.#ctx;
    const limit = Math.max(1, query.limit);
    const match = (e: AuditEntry): boolean =>
      (query.who === undefined || e.who === query.who) &&
      (query.action === undefined || e.action === query.action) &&
      (query.kind === undefined || e.kind === query.kind || e.filter?.kind === query.kind) &&
      (query.target === undefined || e.target === query.target);
    const filtered = query.who ?? query.action ?? query.kind ?? query.target;
    const entries: AuditEntry[] = [];
    // A descending range ends at `fromKey`, inclusive: the cursor's own entry is skipped.
    let from = query.cursor !== undefined ? keys.audit(query.cursor) : undefined;
    for (;;) {
      const res = await kv.range(keys.auditPrefix, {
        reverse: true,
        limit: (filtered !== undefined ? READ_PAGE : limit + 1) + 1,
        ...(from !== undefined ? { fromKey: from } : {}),
      });
      let last: string | undefined;
      for (const found of res.kvs) {
        if (found.key === from) continue;
        last = found.key;
        const entry = decode(AuditEntrySchema, found);
        if (!match(entry)) continue;
        if (entries.length === limit) return { entries, next: entries[limit - 1]!.id };
        entries.push(entry);
      }
      if (!res.more || last === undefined) return { entries };
      from = last;
    }
  }

  async prune(): Promise<number> {
    const { kv, keys, clock } = this.#ctx;
    const cutoff = this.#limits.ttlMs > 0 ? clock.now() - this.#limits.ttlMs : -Infinity;
    const total = (await kv.range(keys.auditPrefix, { countOnly: true })).count;
    const excess = total - this.#limits.limit;
    let doomed: string[] = [];
    let deleted = 0;
    let i = 0;
    // Oldest first: the excess is the first keys, and the expired ones come before the rest.
    for await (const found of scan(kv, keys.auditPrefix, { keysOnly: true, pageSize: PRUNE_PAGE })) {
      const at = idTime(found.key.slice(keys.auditPrefix.length)) ?? Infinity;
      if (i++ >= excess && at >= cutoff) break;
      doomed.push(found.key);
      if (doomed.length >= PRUNE_BATCH) {
        deleted += await deleteInBatches(kv, doomed);
        doomed = [];
      }
    }
    return deleted + (await deleteInBatches(kv, doomed));
  }
}
