import { createHash } from 'node:crypto';

/** Length of a cause id in hex digits: 48 bits, far more than the distinct errors of a fleet. */
const CAUSE_ID_HEX = 12;
/** Causes remembered by (store, error); emptied whole when full, so at most this many (about 3 MB). */
const RECENT_MAX = 4096;
const recent = new Map<string, string>();

// Replaced in this order, most specific first, so that a UUID is not read as hex runs and numbers,
// nor a path's file name as a hex id.
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
/** A hex run of 8 or more with a digit in it: object ids, hashes, fragment names. */
const HEX = /\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi;
/** A path (two or more segments); its segments that hold a digit vary from store to store. */
const PATH = /(?:[\w.~<>-]*\/)+[\w.~<>-]+/g;
const NUMBER = /\d+/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The part of a path segment before its extensions (`0a1b.lance` → `0a1b`, `.lance`). */
function variableSegment(segment: string): string {
  if (!/\d/.test(segment)) return segment;
  const dot = segment.indexOf('.', 1);
  const ext = dot > 0 ? segment.slice(dot).replace(NUMBER, '#') : '';
  return `*${ext}`;
}

/**
 * An error's text with what varies between stores and attempts taken out: the store's own name,
 * UUIDs, hex ids, the segments of paths that hold digits, and numbers. Two failures with one cause
 * — `Not found: s3://b/orders/data/4f1c….lance` and `… /users/data/9a0e….lance` — normalise to
 * the same text. Pure: masters on every Node line give one text for one error.
 *
 * @param error - the failure's error, as stored (already sanitised).
 * @param target - the store it failed on, whose name is replaced wherever it appears.
 */
export function normaliseError(error: string, target?: string): string {
  let text = error;
  // As a whole name only: a store called `a` must not take every `a` out of its errors.
  if (target)
    text = text.replace(new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(target)}(?![A-Za-z0-9_])`, 'g'), '<store>');
  return text
    .replace(UUID, '<uuid>')
    .replace(PATH, (path) => path.split('/').map(variableSegment).join('/'))
    .replace(HEX, '<hex>')
    .replace(NUMBER, '#')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A failure's cause: a short stable id of its {@link normaliseError | normalised} text, the same
 * on every master and every release that normalises alike. Failures whose errors differ only in
 * ids, numbers and paths share a cause, so an operator sees one row and can park its stores in
 * one request.
 *
 * @param error - the failure's error, as stored.
 * @param target - the store it failed on.
 * @returns 12 lowercase hex digits.
 */
export function failureCause(error: string, target?: string): string {
  const key = `${target ?? ''}\0${error}`;
  let cause = recent.get(key);
  if (cause === undefined) {
    cause = createHash('sha256').update(normaliseError(error, target)).digest('hex').slice(0, CAUSE_ID_HEX);
    // Lists show the cause of every entry on every read; the same few errors come back each time.
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(key, cause);
  }
  return cause;
}
