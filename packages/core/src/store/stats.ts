import { targetFromHex } from '../keys.js';
import { type StoreStats, type TaskKind, StoreStatsSchema } from '../model.js';
import { deleteInBatches, txnInBatches } from './batched.js';
import { decode, encodeStats, parseInput } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';

/**
 * What a sweep reads about the fleet besides cooldowns: the stores' stats rows (written by the
 * stats scan) and the targets that already have an active task.
 */
export class StatsStore {
  readonly #ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
  }

  async putStats(rows: readonly StoreStats[]): Promise<void> {
    const { kv, keys } = this.#ctx;
    // Validate every row before writing any, so a bad row leaves no partial scan behind.
    const valid = rows.map((row, i) => parseInput(StoreStatsSchema, row, `stats[${i}]`));
    await txnInBatches(
      kv,
      valid.map((row) => ({ type: 'put' as const, key: keys.stats(row.name), value: encodeStats(row) })),
    );
  }

  async getStats(name: string): Promise<StoreStats | undefined> {
    const found = await this.#ctx.kv.get(this.#ctx.keys.stats(name));
    return found ? decode(StoreStatsSchema, found) : undefined;
  }

  async listStats(): Promise<StoreStats[]> {
    const out: StoreStats[] = [];
    for await (const found of scan(this.#ctx.kv, this.#ctx.keys.statsPrefix)) {
      out.push(decode(StoreStatsSchema, found));
    }
    return out;
  }

  async hasStats(): Promise<boolean> {
    const page = await this.#ctx.kv.range(this.#ctx.keys.statsPrefix, { limit: 1, keysOnly: true });
    return page.kvs.length > 0;
  }

  async deleteStats(names: readonly string[]): Promise<number> {
    const { kv, keys } = this.#ctx;
    return deleteInBatches(
      kv,
      names.map((name) => keys.stats(name)),
    );
  }

  async activeTargets(kind: TaskKind): Promise<Set<string>> {
    const prefix = this.#ctx.keys.dedupeKindPrefix(kind);
    const out = new Set<string>();
    for await (const found of scan(this.#ctx.kv, prefix, { keysOnly: true })) {
      out.add(targetFromHex(found.key.slice(prefix.length)));
    }
    return out;
  }
}
