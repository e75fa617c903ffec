/**
 * The queued tasks of one kind as a binary min-heap on (enqueue time, id), with lazy deletion: a
 * claim does not search the heap; entries whose task is no longer queued are dropped when they
 * reach the top (at scrape time) or when the heap is rebuilt. So an enqueue is O(log n), a claim
 * O(1) and the oldest-age query O(log n) amortised.
 */

/** One kind's heap. Its entries are parallel arrays: no object per entry. */
export interface QueueHeap {
  at: number[];
  ids: string[];
  /** Tasks of this kind currently queued: the live part of the heap, counted by its owner. */
  queued: number;
}

/** Whether the entry (`at`, `id`) still describes a task that is queued, as it was pushed. */
export type IsLive = (at: number, id: string) => boolean;

/** An empty heap. */
export function createQueueHeap(): QueueHeap {
  return { at: [], ids: [], queued: 0 };
}

/** Adds the entry (`at`, `id`); stale entries are swept first once they outnumber the live ones. */
export function heapPush(q: QueueHeap, at: number, id: string, live: IsLive): void {
  // Entries of claimed tasks wait for the top; rebuild before they outnumber the live ones, so
  // the heap stays O(queued) however tasks leave it.
  if (q.ids.length >= 2 * q.queued + 1024) rebuild(q, live);
  let i = q.at.length;
  q.at.push(at);
  q.ids.push(id);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!less(q, i, parent)) break;
    swap(q, i, parent);
    i = parent;
  }
}

/** The time of the oldest live entry, dropping stale ones on the way; undefined when none is live. */
export function heapOldest(q: QueueHeap, live: IsLive): number | undefined {
  while (q.at.length > 0) {
    if (live(q.at[0]!, q.ids[0]!)) return q.at[0];
    pop(q);
  }
  return undefined;
}

function rebuild(q: QueueHeap, live: IsLive): void {
  const seen = new Set<string>();
  const at: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < q.ids.length; i++) {
    const id = q.ids[i]!;
    if (seen.has(id) || !live(q.at[i]!, id)) continue;
    seen.add(id);
    at.push(q.at[i]!);
    ids.push(id);
  }
  q.at = at;
  q.ids = ids;
  for (let i = (q.at.length >> 1) - 1; i >= 0; i--) siftDown(q, i);
}

/** Time, then id: UUIDv7 ids order tasks enqueued within one millisecond. */
function less(q: QueueHeap, a: number, b: number): boolean {
  const x = q.at[a]!;
  const y = q.at[b]!;
  return x < y || (x === y && q.ids[a]! < q.ids[b]!);
}

function swap(q: QueueHeap, a: number, b: number): void {
  [q.at[a], q.at[b]] = [q.at[b]!, q.at[a]!];
  [q.ids[a], q.ids[b]] = [q.ids[b]!, q.ids[a]!];
}

function siftDown(q: QueueHeap, start: number): void {
  const n = q.at.length;
  let i = start;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < n && less(q, l, m)) m = l;
    if (r < n && less(q, r, m)) m = r;
    if (m === i) return;
    swap(q, i, m);
    i = m;
  }
}

function pop(q: QueueHeap): void {
  const lastAt = q.at.pop()!;
  const lastId = q.ids.pop()!;
  if (q.at.length === 0) return;
  q.at[0] = lastAt;
  q.ids[0] = lastId;
  siftDown(q, 0);
}
