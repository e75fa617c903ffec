import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach } from 'vitest';
import type { TaskKind } from '../model.js';
import { seededRandom } from '../random.js';
import { type Claim, TaskStore, type TaskStoreOptions } from '../task-store.js';
import { type KvHarness, withClockRunning } from './harness.js';

/** Overrides a contract test may pass when opening a store. */
export type StoreOverrides = Partial<Omit<TaskStoreOptions, 'prefix' | 'clock'>>;

/**
 * What every test of the TaskStore contract works with: a fresh harness and random prefix per
 * test, and stores opened on them (several stand in for several masters), closed after it.
 */
export interface StoreContractFixture {
  /** This test's harness. */
  readonly h: KvHarness;
  /** This test's key prefix. */
  readonly prefix: string;
  /** Opens a store on a client of its own, as another master. */
  readonly open: (overrides?: StoreOverrides) => Promise<TaskStore>;
  /** A store fed by its own queue watch, as a master's scheduler feeds it. */
  readonly openFed: (overrides?: StoreOverrides) => Promise<TaskStore>;
  /** The next claim of `kinds`, failing the test when there is none. */
  readonly claimOrFail: (store: TaskStore, kinds: readonly TaskKind[]) => Promise<Claim>;
  /** Awaits `p` with the harness clock running. */
  readonly run: <T>(p: Promise<T>) => Promise<T>;
  /** Four claimers per store claim and finish compactions until the queue is empty; the ids claimed. */
  readonly drain: (from: readonly TaskStore[]) => Promise<string[]>;
}

/** Registers the per-test setup and teardown in the calling `describe`, and returns its fixture. */
export function storeContractFixture(makeHarness: () => Promise<KvHarness>): StoreContractFixture {
  let h: KvHarness;
  let prefix: string;
  let stores: TaskStore[];
  let n: number;

  const open = async (overrides: StoreOverrides = {}): Promise<TaskStore> => {
    const kv = overrides.kv ?? (await h.connect());
    const store = await TaskStore.open({
      kv,
      prefix,
      clock: h.clock,
      random: seededRandom(++n),
      masterId: `master-${n}`,
      leaseTtlSecs: 5,
      ...overrides,
    });
    stores.push(store);
    return store;
  };
  /** A store fed by its own queue watch, as a master's scheduler feeds it. */
  const openFed = async (overrides: StoreOverrides = {}): Promise<TaskStore> => {
    const kv = overrides.kv ?? (await h.connect());
    const store = await open({ ...overrides, kv });
    await kv.watch(store.keys.queuePrefix(), (events) => store.observeQueue(events));
    store.setQueueFeed(true);
    return store;
  };
  const claimOrFail = async (store: TaskStore, kinds: readonly TaskKind[]): Promise<Claim> => {
    const claim = await store.claimNext(kinds);
    if (!claim) throw new Error(`expected a claim of ${kinds.join(',')}`);
    return claim;
  };
  const run = <T>(p: Promise<T>): Promise<T> => withClockRunning(h.clock, p);
  /** Four claimers per store claim and finish compactions until the queue is empty; the ids claimed. */
  const drain = async (from: readonly TaskStore[]): Promise<string[]> => {
    const claimed: string[] = [];
    await Promise.all(
      from.flatMap((s) =>
        Array.from({ length: 4 }, async () => {
          for (;;) {
            const claim = await s.claimNext(['compact']);
            if (!claim) {
              if ((await s.queueDepth('compact')) === 0) return;
              continue;
            }
            claimed.push(claim.task.id);
            await s.finish(claim, { ok: true, detail: 'ok' });
          }
        }),
      ),
    );
    return claimed;
  };

  beforeEach(async () => {
    h = await makeHarness();
    prefix = `/contract/${randomUUID()}`;
    stores = [];
    n = 0;
  });
  afterEach(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    const kv = await h.connect();
    await kv.deletePrefix(`${prefix}/`).catch(() => undefined);
    await h.close();
  });
  return {
    get h() {
      return h;
    },
    get prefix() {
      return prefix;
    },
    open,
    openFed,
    claimOrFail,
    run,
    drain,
  };
}
