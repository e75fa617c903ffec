import type { z } from 'zod';
import { CorruptRecordError, ValidationError } from '../errors.js';
import type { KeyValue } from '../kv/port.js';
import { type StoreStats, type SweepMark, type TaskRecord, type WorkerScan, keepUnknownFields } from '../model.js';

/**
 * Parses a stored record. Every read of a record goes through here, so that a record another
 * version (or a hand edit) left malformed surfaces as one {@link CorruptRecordError} naming its
 * key, never as a half-typed object deeper in. Fields a newer release added stay on the record,
 * out of sight, for the record's encoder to write back (see `keepUnknownFields`).
 */
export function decode<S extends z.ZodObject>(schema: S, kv: KeyValue): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(kv.value);
  } catch (cause) {
    throw new CorruptRecordError(kv.key, { cause });
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw new CorruptRecordError(kv.key, { cause: r.error });
  return keepUnknownFields(schema, raw, r.data);
}

/**
 * {@link decode}, or undefined when there is no value or it does not parse: for a record read
 * only to decide whether to act (a park a claim or a resume checks, a held task to put back), where
 * an unreadable one counts as absent and the guarded write that follows settles it.
 */
export function decodeOrNone<S extends z.ZodObject>(schema: S, kv: KeyValue | undefined): z.infer<S> | undefined {
  if (!kv) return undefined;
  try {
    return decode(schema, kv);
  } catch {
    return undefined;
  }
}

/** Validates caller input, failing with a {@link ValidationError} that names the offending field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, field: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${field}.${issue.path.join('.')}` : field;
  throw new ValidationError(`invalid ${path}: ${issue?.message ?? 'invalid value'}`, { field: path });
}

/** Encodes a validated stats row (its fields in schema order, as parsing leaves them). */
export function encodeStats(row: StoreStats): string {
  return JSON.stringify(row);
}

/** Encodes a validated worker scan result (its fields in schema order, as parsing leaves them). */
export function encodeWorkerScan(w: WorkerScan): string {
  return JSON.stringify(w);
}

/** Encodes the last-run marker of a periodic job. */
export function encodeSweepMark(mark: SweepMark): string {
  return JSON.stringify({ slot: mark.slot, ran_at: mark.ran_at, master_id: mark.master_id });
}

/** The record without the fields of its last run: what goes back in the queue. */
export function stripRun(t: TaskRecord): TaskRecord {
  const copy = { ...t };
  delete copy.started_at;
  delete copy.owner;
  delete copy.finished_at;
  delete copy.detail;
  delete copy.error;
  delete copy.error_class;
  delete copy.held_at;
  delete copy.held_reason;
  return copy;
}

/** The smallest UUIDv7 text for a millisecond timestamp: every id minted at or after it sorts ≥. */
export function idLowerBound(ms: number): string {
  const hex = Math.floor(ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/** The millisecond timestamp a UUIDv7 encodes, if it is one. */
export function idTime(id: string): number | undefined {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-7/.exec(id);
  return m ? parseInt(`${m[1]}${m[2]}`, 16) : undefined;
}
