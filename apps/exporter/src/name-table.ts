/**
 * The names one aggregate has met, each given a small index when first seen: its task kinds (in a
 * record's key or value, or in a master's registration) and its task states (docs/ARCHITECTURE.md
 * §2.1). The exporter names no kind of its own, and only today's states: a kind or a task state
 * added by a later release is counted under its name as soon as a record or a registration shows
 * it, not left out as undecodable (docs/ARCHITECTURE.md §2.8: masters gate what they write, an
 * exporter of either version reads what masters of either version wrote).
 *
 * Indexes are never reused: an aggregate's packed tasks hold them, and an aggregate lives for one
 * sync, so a name whose records are all gone costs one entry until the next sync.
 */
import { KIND_PATTERN, TaskStateSchema } from '@maintd/core';

/**
 * Most distinct kinds one aggregate tells apart. A kind is a label value of every per-kind
 * series, so a flood of made-up kind names must not grow them without bound; a real fleet runs a
 * handful. The aggregate packs an enqueue time with `kind * MAX_STATES + state` into one exact
 * double, which holds for this many kinds and states (see `aggregate.ts`). A record of a kind
 * beyond it is left out as undecodable.
 */
export const MAX_KINDS = 256;

/**
 * Most distinct task states one aggregate tells apart: today's five (`held` among them,
 * docs/ARCHITECTURE.md §2.1) and up to three more of later releases, each a `state` label value
 * of `master_cluster_tasks`. A record of a state beyond it
 * is left out as undecodable, as one of a kind beyond {@link MAX_KINDS} is.
 */
export const MAX_STATES = 8;

/** Names in the order first seen, each one's index, and what the table admits. */
export interface NameTable {
  readonly names: string[];
  readonly index: Map<string, number>;
  /** Most names the table holds. */
  readonly limit: number;
  /** What a name must match to be added. */
  readonly pattern: RegExp;
}

/** An empty table of kinds: any name core's kind pattern allows, up to {@link MAX_KINDS}. */
export function createKindTable(): NameTable {
  return { names: [], index: new Map(), limit: MAX_KINDS, pattern: KIND_PATTERN };
}

/**
 * A table of task states (named as kinds are, so a label value can hold one) holding today's states first, in core's schema order (so their indexes
 * are fixed, `queued` among them), then those of later releases as records show them, up to
 * {@link MAX_STATES}.
 */
export function createStateTable(): NameTable {
  const names = [...TaskStateSchema.options];
  return { names, index: new Map(names.map((n, i) => [n, i])), limit: MAX_STATES, pattern: KIND_PATTERN };
}

/**
 * The index of `name`, added to the table when new; -1 for a name the table's pattern refuses or
 * when the table is full.
 */
export function internName(table: NameTable, name: string): number {
  const known = table.index.get(name);
  if (known !== undefined) return known;
  if (table.names.length >= table.limit || !table.pattern.test(name)) return -1;
  table.names.push(name);
  table.index.set(name, table.names.length - 1);
  return table.names.length - 1;
}

const QUOTE = 34;

/**
 * The index of the name held by the JSON string that starts at `at` in `json` (-1 when there is
 * no string there, or the table refuses it). A name already in the table is matched in place,
 * with no string made: a sync reads a kind and a state from each of 100k task records, nearly
 * all of them known. A name has no character JSON escapes, so a string holding a backslash is
 * not one.
 */
export function nameAt(table: NameTable, json: string, at: number): number {
  if (at < 0 || json.charCodeAt(at) !== QUOTE) return -1;
  const { names } = table;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (json.startsWith(name, at + 1) && json.charCodeAt(at + 1 + name.length) === QUOTE) return i;
  }
  const end = json.indexOf('"', at + 1);
  return end < 0 ? -1 : internName(table, json.slice(at + 1, end));
}
