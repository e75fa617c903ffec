/**
 * The few fields of a record's JSON that a metric needs, read in place. A sync reads 100k task
 * records and keeps two small numbers of each: parsing them (JSON.parse, then a schema) would
 * build every field of every record only to drop it, and that garbage is what a sync's memory
 * peak is made of. A value that lacks a field, or holds one of the wrong type, is undecodable
 * (the aggregate counts it as invalid), as it would be for the record's schema.
 *
 * Records are flat JSON objects (docs/ARCHITECTURE.md §2.1): a field name, quoted and followed by
 * a colon, is found by searching for it. Inside a JSON string every quote is escaped, so such a
 * match is always a name, never part of a value.
 */
import { TaskStateSchema } from '@maintd/core';
import { type NameTable, nameAt } from './name-table.js';

/**
 * Today's task states in schema order, the first entries of every state table: each is exported
 * (as 0 when none) for every kind; a later release's state joins as a record shows it.
 */
export const TASK_STATES = TaskStateSchema.options;

/** What the aggregate keeps of a task record: indexes into its kind table and its state table. */
export interface TaskFields {
  readonly kind: number;
  readonly state: number;
  /** `enqueued_at`: read only when asked (a task key that is not a UUIDv7 tells no time). */
  readonly enqueuedAt: number;
}

/** What the aggregate keeps of a cooldown record. */
export interface CooldownFields {
  readonly failures: number;
  readonly untilMs: number | null;
  readonly firstFailureMs: number;
}

/**
 * The kind, state and (with `withEnqueuedAt`) enqueued_at of a task record; undefined if
 * undecodable. A well-formed kind not yet in `kinds`, or state not yet in `states`, is added to
 * it: a later master's kind or state (a `quarantined` task, say) is data, not damage.
 */
export function readTask(
  json: string,
  withEnqueuedAt: boolean,
  kinds: NameTable,
  states: NameTable,
): TaskFields | undefined {
  if (!isObject(json)) return undefined;
  const kind = nameAt(kinds, json, valueAt(json, '"kind"'));
  const state = nameAt(states, json, valueAt(json, '"state"'));
  const enqueuedAt = withEnqueuedAt ? wholeAt(json, valueAt(json, '"enqueued_at"')) : 0;
  return kind < 0 || state < 0 || enqueuedAt < 0 ? undefined : { kind, state, enqueuedAt };
}

/** The counted failures and the window of a cooldown record; undefined if undecodable. */
export function readCooldown(json: string): CooldownFields | undefined {
  if (!isObject(json)) return undefined;
  const failures = wholeAt(json, valueAt(json, '"failures"'));
  const untilMs = wholeOrNullAt(json, valueAt(json, '"until_ms"'));
  const firstFailureMs = wholeAt(json, valueAt(json, '"first_failure_ms"'));
  if (failures < 1 || (untilMs !== null && untilMs < 0) || firstFailureMs < 0) return undefined;
  return { failures, untilMs, firstFailureMs };
}

/** A park record's `until_ms` (null: until released), or undefined if undecodable. */
export function readParkUntil(json: string): number | null | undefined {
  if (!isObject(json)) return undefined;
  const until = wholeOrNullAt(json, valueAt(json, '"until_ms"'));
  return until !== null && until < 0 ? undefined : until;
}

/**
 * The kinds a master's registration says it runs (`kinds`, absent from a master that predates
 * it: none then). Registrations are a handful of small values, so this one is parsed whole; a
 * name that is not a string is skipped here and its pattern checked by the kind table.
 */
export function readMasterKinds(json: string): readonly string[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return [];
  }
  const kinds = typeof value === 'object' && value !== null ? (value as { kinds?: unknown }).kinds : undefined;
  return Array.isArray(kinds) ? kinds.filter((k): k is string => typeof k === 'string') : [];
}

/** A stats row's pending WAL generations, or undefined if undecodable. */
export function readPendingWal(json: string): number | undefined {
  if (!isObject(json)) return undefined;
  const pending = wholeAt(json, valueAt(json, '"pending_wal_generations"'));
  return pending < 0 ? undefined : pending;
}

const COLON = 58;

/** Whether `json` is braced like an object: a cut-off value is not. */
function isObject(json: string): boolean {
  const s = json.trim();
  return s.startsWith('{') && s.endsWith('}');
}

/** The index of the value of the field `quotedName` (`"name"`), or -1 when there is none. */
function valueAt(json: string, quotedName: string): number {
  for (let i = json.indexOf(quotedName); i >= 0; i = json.indexOf(quotedName, i + 1)) {
    const colon = skipSpace(json, i + quotedName.length);
    if (json.charCodeAt(colon) === COLON) return skipSpace(json, colon + 1);
  }
  return -1;
}

function skipSpace(json: string, i: number): number {
  let at = i;
  while (at < json.length && (json[at] === ' ' || json[at] === '\n' || json[at] === '\r' || json[at] === '\t')) at++;
  return at;
}

/** The non-negative whole number at `at`, or -1 (a fraction, an exponent or a sign is not one). */
function wholeAt(json: string, at: number): number {
  if (at < 0) return -1;
  let n = 0;
  let i = at;
  for (; i < json.length; i++) {
    const d = json.charCodeAt(i) - 48;
    if (d < 0 || d > 9) break;
    n = n * 10 + d;
  }
  const next = json[i];
  if (i === at || next === '.' || next === 'e' || next === 'E' || !Number.isSafeInteger(n)) return -1;
  return n;
}

/** As {@link wholeAt}, or null for a JSON null. */
function wholeOrNullAt(json: string, at: number): number | null {
  return at >= 0 && json.startsWith('null', at) ? null : wholeAt(json, at);
}
