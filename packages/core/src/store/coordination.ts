import { MasterInfoSchema, type MasterInfo, SweepMarkSchema } from '../model.js';
import { decode, encodeSweepMark } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';

/** A held coordination lock; release it when done (it also dies with the session). */
export interface HeldLock {
  /** The lock’s name. */
  readonly name: string;
  /** Releases the lock if still held. */
  release(): Promise<void>;
}

/** Fleet-wide coordination between masters: named locks, periodic-job slots, registrations. */
export class Coordination {
  readonly #ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
  }

  async tryLock(name: string): Promise<HeldLock | undefined> {
    const { kv, keys, session, masterId } = this.#ctx;
    const lease = session.lease;
    if (!lease) return undefined;
    const key = keys.lock(name);
    const res = await kv.txn(
      [{ key, target: 'version', op: '==', value: 0 }],
      [{ type: 'put', key, value: masterId, lease: lease.id }],
    );
    if (!res.succeeded) return undefined;
    const revision = res.revision;
    return {
      name,
      // Only this acquisition's key: after a session loss someone else may hold the name.
      release: async () => {
        await kv.txn([{ key, target: 'createRevision', op: '==', value: revision }], [{ type: 'delete', key }]);
      },
    };
  }

  /**
   * Slots are aligned multiples of `intervalMs` on the clock rather than "interval since the last
   * run", so masters whose timers drift still agree on which run is due.
   */
  async runEvery(name: string, intervalMs: number): Promise<boolean> {
    if (!(intervalMs > 0)) return false;
    const { kv, keys, clock, masterId } = this.#ctx;
    const key = keys.sweep(name);
    const now = clock.now();
    const slot = Math.floor(now / intervalMs);
    const found = await kv.get(key);
    if (found && decode(SweepMarkSchema, found).slot >= slot) return false;
    const res = await kv.txn(
      [{ key, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }],
      [{ type: 'put', key, value: encodeSweepMark({ slot, ran_at: now, master_id: masterId }) }],
    );
    return res.succeeded;
  }

  async listMasters(): Promise<MasterInfo[]> {
    const out: MasterInfo[] = [];
    for await (const found of scan(this.#ctx.kv, this.#ctx.keys.mastersPrefix)) {
      out.push(decode(MasterInfoSchema, found));
    }
    return out;
  }
}
