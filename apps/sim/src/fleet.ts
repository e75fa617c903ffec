import { type Clock, type Random, seededRandom } from '@maintd/core';

/** Shape of the simulated fleet. */
export interface FleetOptions {
  readonly workers: number;
  readonly stores: number;
  /** How many stores are broken (their manifest names a missing fragment). */
  readonly broken: number;
  readonly seed: number;
  /** WAL generations per minute per store: each store draws a rate in [min, max). Default [0.5, 3). */
  readonly ratePerMinute?: readonly [number, number];
  /** Pending generations the first broken store starts with (production: 7,985). */
  readonly firstBrokenBacklog?: number;
  /** Latency of a healthy merge: `base + perGeneration × reclaimed` ms. Default 200 + 2/gen. */
  readonly mergeLatency?: { readonly baseMs: number; readonly perGenerationMs: number };
  /** How long a broken store's owner works on a merge or compaction before failing. Default 1500 ms. */
  readonly brokenLatencyMs?: number;
  /** Broken stores are sharded over every worker (their shared manifest fails each shard's merge). Default false. */
  readonly brokenOnAllWorkers?: boolean;
}

/** One simulated store. Pending generations are tracked per owning worker (each owns a shard's WAL). */
export interface SimStore {
  readonly name: string;
  readonly broken: boolean;
  /** Worker indices that own a shard of this store. */
  readonly owners: readonly number[];
  readonly ratePerMinute: number;
  /** Pending generations per owner, as of `updatedAt`. */
  readonly pending: number[];
  fragments: number;
  rows: number;
  updatedAt: number;
}

/** A worker's answer to one call, and how long the worker takes to give it. */
export interface SimReply {
  readonly status: number;
  readonly body: unknown;
  readonly latencyMs: number;
}

/**
 * The simulated fleet shared by every simulated worker: stores whose WAL generations grow at
 * their own rate, are reclaimed by merges and whose fragments shrink with compaction; broken
 * stores fail both, forever, and never shrink. Pure state over an injected clock and a seeded
 * random source, so a simulation replays byte for byte.
 */
export class Fleet {
  readonly stores: readonly SimStore[];
  readonly workers: number;
  readonly #byName: ReadonlyMap<string, SimStore>;
  readonly #clock: Clock;
  readonly #merge: { readonly baseMs: number; readonly perGenerationMs: number };
  readonly #brokenLatencyMs: number;

  constructor(options: FleetOptions, clock: Clock) {
    this.#clock = clock;
    this.workers = options.workers;
    this.#merge = options.mergeLatency ?? { baseMs: 200, perGenerationMs: 2 };
    this.#brokenLatencyMs = options.brokenLatencyMs ?? 1500;
    const random = seededRandom(options.seed);
    const [lo, hi] = options.ratePerMinute ?? [0.5, 3];
    const width = String(options.stores - 1).length;
    const brokenAt = pickBroken(random, options.stores, options.broken);
    const now = clock.now();
    this.stores = Array.from({ length: options.stores }, (_, i) => {
      const broken = brokenAt.has(i);
      const drawn = pickOwners(random, options.workers);
      const owners =
        broken && options.brokenOnAllWorkers ? Array.from({ length: options.workers }, (_, w) => w) : drawn;
      const rate = lo + random.next() * (hi - lo);
      // A broken store has been failing for a while: its WAL has piled up, since nothing merges it.
      const pending = owners.map(
        () => Math.floor(random.next() * 6) + (broken ? 50 + Math.floor(random.next() * 200) : 0),
      );
      if (broken && [...brokenAt].sort((a, b) => a - b)[0] === i) {
        // The incident's worst store: a backlog of 7,985 generations nobody can merge.
        const backlog = options.firstBrokenBacklog ?? 7985;
        pending.fill(0);
        pending[0] = backlog;
      }
      return {
        name: `${broken ? 'broken' : 'store'}-${String(i).padStart(width, '0')}`,
        broken,
        owners,
        ratePerMinute: rate,
        pending,
        fragments: 4 + Math.floor(random.next() * 10),
        rows: 10_000 + Math.floor(random.next() * 90_000),
        updatedAt: now,
      };
    });
    this.#byName = new Map(this.stores.map((s) => [s.name, s]));
  }

  /** Names of the broken stores. */
  get brokenNames(): string[] {
    return this.stores.filter((s) => s.broken).map((s) => s.name);
  }

  /** Total pending generations of a store across its owners, now. */
  pendingOf(name: string): number {
    const s = this.#byName.get(name);
    if (!s) return 0;
    this.#grow(s);
    return s.pending.reduce((a, b) => a + Math.floor(b), 0);
  }

  /** Whether worker `w` holds a shard of the store (a merge there is real work, not a 404). */
  owns(w: number, name: string): boolean {
    return this.#byName.get(name)?.owners.includes(w) ?? false;
  }

  /** `GET /api/v1/internal/stores` of worker `w`: the shards it owns. */
  report(w: number): SimReply {
    const stores = [];
    for (const s of this.stores) {
      const slot = s.owners.indexOf(w);
      if (slot < 0) continue;
      this.#grow(s);
      stores.push({
        name: s.name,
        pending_wal_generations: Math.floor(s.pending[slot]!),
        fragment_count: s.fragments,
        row_count: Math.floor(s.rows / s.owners.length),
      });
    }
    return { status: 200, body: { stores }, latencyMs: 5 };
  }

  /** `POST /api/v1/internal/merge-wal/{name}` on worker `w`. */
  merge(w: number, name: string): SimReply {
    const s = this.#byName.get(name);
    const slot = s ? s.owners.indexOf(w) : -1;
    if (!s || slot < 0) return { status: 404, body: { error: `store '${name}' is not on this worker` }, latencyMs: 0 };
    if (s.broken) return this.#brokenReply(s);
    this.#grow(s);
    const reclaimed = Math.floor(s.pending[slot]!);
    s.pending[slot] = s.pending[slot]! - reclaimed;
    s.fragments += reclaimed > 0 ? 1 : 0;
    return {
      status: 200,
      body: { reclaimed },
      latencyMs: this.#merge.baseMs + this.#merge.perGenerationMs * reclaimed,
    };
  }

  /** `POST /api/v1/internal/compact/{name}` on worker `w`. */
  compact(w: number, name: string): SimReply {
    const s = this.#byName.get(name);
    if (!s || !s.owners.includes(w))
      return { status: 404, body: { error: `store '${name}' is not on this worker` }, latencyMs: 0 };
    if (s.broken) return this.#brokenReply(s);
    const removed = s.fragments;
    s.fragments = 1;
    return { status: 200, body: { fragments_removed: removed, fragments_added: 1 }, latencyMs: 100 + 20 * removed };
  }

  /** `POST /api/v1/internal/index-id/{name}` on worker `w`: a btree index, or the broken store's error. */
  indexId(w: number, name: string): SimReply {
    const s = this.#byName.get(name);
    if (!s || !s.owners.includes(w))
      return { status: 404, body: { error: `store '${name}' is not on this worker` }, latencyMs: 0 };
    if (s.broken) return this.#brokenReply(s);
    return { status: 200, body: { index_type: 'btree' }, latencyMs: 50 };
  }

  #brokenReply(s: SimStore): SimReply {
    return {
      status: 500,
      body: { error: `Not found: /data/${s.name}.lance/data/${fragmentName(s.name)}.lance` },
      latencyMs: this.#brokenLatencyMs,
    };
  }

  /** Brings a store's WAL growth up to now. */
  #grow(s: SimStore): void {
    const now = this.#clock.now();
    const minutes = (now - s.updatedAt) / 60_000;
    if (minutes <= 0) return;
    const perOwner = (s.ratePerMinute * minutes) / s.owners.length;
    for (let i = 0; i < s.pending.length; i++) s.pending[i] = s.pending[i]! + perOwner;
    s.updatedAt = now;
  }
}

function pickBroken(random: Random, stores: number, broken: number): Set<number> {
  const out = new Set<number>();
  while (out.size < Math.min(broken, stores)) out.add(Math.floor(random.next() * stores));
  return out;
}

/** One owner mostly; a quarter of the stores are sharded over two workers. */
function pickOwners(random: Random, workers: number): number[] {
  const first = Math.floor(random.next() * workers);
  if (workers > 1 && random.next() < 0.25)
    return [first, (first + 1 + Math.floor(random.next() * (workers - 1))) % workers];
  return [first];
}

/** A stable, realistic-looking fragment file name for a broken store's error. */
function fragmentName(name: string): string {
  let h = 0;
  for (const c of name) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return `${h.toString(16).padStart(8, '0')}-7b2c-4f1e-9a3d-${(h * 7).toString(16).padStart(12, '0').slice(-12)}`;
}
