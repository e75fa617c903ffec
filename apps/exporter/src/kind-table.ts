/**
 * The task kinds one aggregate has met, each given a small index when first seen: in a record's
 * key or value, or in a master's registration (docs/ARCHITECTURE.md §2.1). The exporter names no
 * kind of its own, so a kind added by a newer master is counted under its name as soon as a
 * record or a registration shows it, not left out as undecodable.
 *
 * Indexes are never reused: an aggregate's packed tasks hold them, and an aggregate lives for one
 * sync, so a kind whose records are all gone costs one entry until the next sync.
 */
import { KIND_PATTERN } from '@maintd/core';

/**
 * Most distinct kinds one aggregate tells apart. A kind is a label value of every per-kind
 * series, so a flood of made-up kind names must not grow them without bound; a real fleet runs a
 * handful. The aggregate packs an enqueue time with `kind * states + state` into one exact
 * double, which holds for this many kinds (see `aggregate.ts`). A record of a kind beyond it is
 * left out as undecodable.
 */
export const MAX_KINDS = 256;

/** Kind names in the order first seen, and each one's index. */
export interface KindTable {
  readonly names: string[];
  readonly index: Map<string, number>;
}

/** An empty table. */
export function createKindTable(): KindTable {
  return { names: [], index: new Map() };
}

/**
 * The index of `name`, added to the table when new; -1 for a name that is not a kind's (core's
 * pattern) or when the table is full.
 */
export function internKind(table: KindTable, name: string): number {
  const known = table.index.get(name);
  if (known !== undefined) return known;
  if (table.names.length >= MAX_KINDS || !KIND_PATTERN.test(name)) return -1;
  table.names.push(name);
  table.index.set(name, table.names.length - 1);
  return table.names.length - 1;
}

const QUOTE = 34;

/**
 * The index of the kind named by the JSON string that starts at `at` in `json` (-1 when there is
 * no string there, or it names no kind). A kind already in the table is matched in place, with no
 * string made: a sync reads a kind from each of 100k task records, nearly all of them known.
 * A kind name has no character JSON escapes, so a string holding a backslash is not one.
 */
export function kindAt(table: KindTable, json: string, at: number): number {
  if (at < 0 || json.charCodeAt(at) !== QUOTE) return -1;
  const { names } = table;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (json.startsWith(name, at + 1) && json.charCodeAt(at + 1 + name.length) === QUOTE) return i;
  }
  const end = json.indexOf('"', at + 1);
  return end < 0 ? -1 : internKind(table, json.slice(at + 1, end));
}
