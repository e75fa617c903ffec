// The Overview's selectable rows (a kind's top consumers, the top causes) and their keys: named by
// the key handling (state/) and drawn by the Overview (views/), so they live beside both.
import type { Capacity, FailureCause, TaskKind } from '../api/types.js';

/** Top consumers of the last hour's slot time listed per kind. */
export const TOP_CONSUMERS = 3;
/** Causes of failures listed. */
export const TOP_CAUSES = 5;

/** What a selectable row of the Overview is. */
export type OverviewRow =
  | { readonly type: 'consumer'; readonly kind: TaskKind; readonly target: string }
  | { readonly type: 'cause'; readonly cause: string };

/** The key of a consumer row: a kind's top store. */
export function consumerKey(kind: TaskKind, target: string): string {
  return `consumer:${kind}/${target}`;
}

/** The key of a cause row. */
export function causeKey(cause: string): string {
  return `cause:${cause}`;
}

/** The row a key names; undefined for a key of neither shape. */
export function parseOverviewKey(key: string): OverviewRow | undefined {
  if (key.startsWith('cause:')) return { type: 'cause', cause: key.slice('cause:'.length) };
  if (!key.startsWith('consumer:')) return undefined;
  const rest = key.slice('consumer:'.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return undefined;
  return { type: 'consumer', kind: rest.slice(0, slash), target: rest.slice(slash + 1) };
}

/**
 * The keys of the Overview's selectable rows, in display order: each kind's top consumers, then
 * the top causes. Nothing from a master that serves neither.
 */
export function overviewRowKeys(
  capacity: Capacity | 'unsupported' | undefined,
  causes: readonly FailureCause[] | 'unsupported' | undefined,
): string[] {
  const keys: string[] = [];
  if (capacity && capacity !== 'unsupported') {
    for (const k of capacity.kinds) {
      for (const u of k.top.slice(0, TOP_CONSUMERS)) keys.push(consumerKey(k.kind, u.target));
    }
  }
  if (causes && causes !== 'unsupported') {
    for (const c of causes.slice(0, TOP_CAUSES)) keys.push(causeKey(c.cause));
  }
  return keys;
}
