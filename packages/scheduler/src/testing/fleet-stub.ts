import { type StubWorker, startStubWorker } from './stub-worker.js';

/** One simulated store on a stub worker. */
export interface StubStore {
  pending: number;
  fragments: number;
  rows: number;
  /** Every merge and compaction fails, as a store whose manifest names a missing fragment. */
  broken: boolean;
  /** Merges never answer. */
  hangMerges?: boolean;
}

/** A stub worker with a little state: merges reclaim pending generations, compactions shrink fragments. */
export interface FleetStub extends StubWorker {
  readonly stores: Map<string, StubStore>;
  /** Calls of a per-store route (`merge-wal`, `compact`, …) for one store name. */
  calls(route: string, name: string): number;
}

/** Starts a stateful stub worker owning `stores`. */
export async function startFleetStub(stores: Record<string, Partial<StubStore>>): Promise<FleetStub> {
  const map = new Map<string, StubStore>(
    Object.entries(stores).map(([name, s]) => [name, { pending: 0, fragments: 1, rows: 100, broken: false, ...s }]),
  );
  const worker = await startStubWorker((req) => {
    if (req.method === 'GET' && req.path === '/api/v1/internal/stores') {
      return {
        status: 200,
        body: {
          stores: [...map].map(([name, s]) => ({
            name,
            pending_wal_generations: s.pending,
            fragment_count: s.fragments,
            row_count: s.rows,
          })),
        },
      };
    }
    const store = req.name ? map.get(req.name) : undefined;
    if (!store) return { status: 404, body: { error: 'not mine' } };
    if (store.broken) {
      return { status: 500, body: { error: `Not found: /data/${req.name}.lance/data/0-frag.lance` } };
    }
    if (req.path.includes('/merge-wal/')) {
      if (store.hangMerges) return { hang: true };
      const reclaimed = store.pending;
      store.pending = 0;
      return { status: 200, body: { reclaimed } };
    }
    if (req.path.includes('/index-id/')) return { status: 200, body: { index_type: 'btree' } };
    const removed = store.fragments;
    store.fragments = 1;
    return { status: 200, body: { fragments_removed: removed, fragments_added: 1 } };
  });
  return Object.assign(worker, {
    stores: map,
    calls: (route: string, name: string) =>
      worker.requests.filter((r) => r.path.includes(`/${route}/`) && r.name === name).length,
  });
}
