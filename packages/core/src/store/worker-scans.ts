import { type WorkerScan, WorkerScanSchema } from '../model.js';
import { deleteInBatches, txnInBatches } from './batched.js';
import { decode, encodeWorkerScan, parseInput } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';

/**
 * Each worker's latest stats-scan result. A scan runs on one master per interval fleet-wide,
 * so its result lives in the store, where every master's `GET /workers` reads it.
 */
export class WorkerScans {
  readonly #ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
  }

  async putWorkerScans(scans: readonly WorkerScan[]): Promise<void> {
    const { kv, keys } = this.#ctx;
    // Validate every record before writing any, so a bad one leaves no partial scan behind.
    const valid = scans.map((w, i) => parseInput(WorkerScanSchema, w, `workers[${i}]`));
    // etcd refuses a transaction that puts one key twice: the later record of an endpoint wins.
    const byEndpoint = [...new Map(valid.map((w) => [w.endpoint, w])).values()];
    await txnInBatches(
      kv,
      byEndpoint.map((w) => ({ type: 'put' as const, key: keys.worker(w.endpoint), value: encodeWorkerScan(w) })),
    );
  }

  async deleteWorkerScans(endpoints: readonly string[]): Promise<number> {
    const { kv, keys } = this.#ctx;
    // etcd refuses a transaction that names one key twice.
    return deleteInBatches(
      kv,
      [...new Set(endpoints)].map((endpoint) => keys.worker(endpoint)),
    );
  }

  async listWorkerScans(): Promise<WorkerScan[]> {
    const out: WorkerScan[] = [];
    for await (const found of scan(this.#ctx.kv, this.#ctx.keys.workersPrefix)) {
      out.push(decode(WorkerScanSchema, found));
    }
    return out;
  }
}
