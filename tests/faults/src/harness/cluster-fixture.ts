import { randomBytes } from 'node:crypto';
import { EtcdKv, type TaskRecord, TaskRecordSchema, type WatchEvent } from '@maintd/core';
import { ResumingWatch } from './resuming-watch.js';

/** A fresh key prefix, so that a scenario's state never mixes with another's. */
export function uniquePrefix(scenario: string): string {
  return `/faults-${scenario}-${randomBytes(4).toString('hex')}`;
}

/** One change of a task record, as etcd's watch delivered it. */
export interface TaskChange {
  /** etcd revision of the change (total order across every key). */
  readonly revision: number;
  /** Wall-clock ms at which the test process received it. */
  readonly seenAt: number;
  /** The record written, or undefined for a delete. */
  readonly record: TaskRecord | undefined;
}

/**
 * Every write to `P/tasks/` from the moment it starts, in revision order, from an etcd watch
 * (re-opened from the last revision seen if it dies, so nothing is missed: the test clusters
 * never compact their history). This is the ground truth of "what happened to each task".
 */
export class TaskHistory {
  readonly #kv: EtcdKv;
  readonly #prefix: string;
  readonly #changes = new Map<string, TaskChange[]>();
  #watch!: ResumingWatch;

  private constructor(kv: EtcdKv, prefix: string) {
    this.#kv = kv;
    this.#prefix = prefix;
  }

  /** Starts watching `<prefix>/tasks/` at the current revision, through `endpoints`. */
  static async start(endpoints: readonly string[], prefix: string): Promise<TaskHistory> {
    const kv = new EtcdKv({ endpoints });
    const history = new TaskHistory(kv, `${prefix}/tasks/`);
    history.#watch = await ResumingWatch.start(kv, history.#prefix, (e, seenAt) => history.#record(e, seenAt));
    return history;
  }

  #record(e: WatchEvent, seenAt: number): void {
    const id = e.key.slice(this.#prefix.length);
    const record = e.type === 'put' ? TaskRecordSchema.parse(JSON.parse(e.value)) : undefined;
    const list = this.#changes.get(id) ?? [];
    list.push({ revision: e.modRevision, seenAt, record });
    this.#changes.set(id, list);
  }

  /** Watch failures (each followed by a resume from the last revision seen). */
  get resumes(): number {
    return this.#watch.resumes;
  }

  /** The revision of the last change seen. */
  get lastRevision(): number {
    return this.#watch.lastRevision;
  }

  /** Every task id seen. */
  ids(): string[] {
    return [...this.#changes.keys()];
  }

  /** The changes of one task, oldest first (empty if never seen). */
  changes(id: string): readonly TaskChange[] {
    return this.#changes.get(id) ?? [];
  }

  /** The latest record of a task, or undefined (never seen, or deleted). */
  latest(id: string): TaskRecord | undefined {
    return this.#changes.get(id)?.at(-1)?.record;
  }

  /** Waits until the watch has delivered every task change etcd holds now. */
  async caughtUp(timeoutMs = 20_000): Promise<void> {
    const page = await this.#kv.range(this.#prefix, { keysOnly: true });
    const newest = page.kvs.reduce((m, kv) => Math.max(m, kv.modRevision), 0);
    const deadline = performance.now() + timeoutMs;
    while (this.lastRevision < newest) {
      if (performance.now() > deadline) throw new Error(`task history stuck at ${this.lastRevision} < ${newest}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async close(): Promise<void> {
    await this.#watch.close();
    await this.#kv.close().catch(() => undefined);
  }
}

const TERMINAL = new Set(['done', 'failed']);

/**
 * Every way a task's recorded life breaks the store's rules (docs/ARCHITECTURE.md §2.6), as sentences; empty
 * when it is sound. Allowed: `queued(attempt 0)`, then `queued → running` (a claim: attempt + 1,
 * an owner and a start time), `running → queued` (orphan recovery: same attempt, no owner),
 * `running → done|failed` by the holder of the latest claim (same attempt and start), `running →
 * failed` by recovery giving up, `queued → failed` for a failed dependency. Nothing after a
 * terminal record, no record deleted.
 */
export function lifecycleViolations(id: string, changes: readonly TaskChange[]): string[] {
  const out: string[] = [];
  const first = changes[0]?.record;
  if (!first) return [`${id}: first change is ${changes.length === 0 ? 'missing' : 'a delete'}`];
  if (first.state !== 'queued' || first.attempt !== 0) {
    out.push(`${id}: created as ${first.state} attempt ${first.attempt}, not queued attempt 0`);
  }
  let prev = first;
  for (const c of changes.slice(1)) {
    const r = c.record;
    const at = `${id}@${c.revision}`;
    if (!r) {
      out.push(`${at}: task record deleted (state was ${prev.state})`);
      break;
    }
    if (TERMINAL.has(prev.state)) out.push(`${at}: ${prev.state} → ${r.state} (written after terminal)`);
    else if (prev.state === 'queued' && r.state === 'running') {
      if (r.attempt !== prev.attempt + 1) out.push(`${at}: claimed with attempt ${r.attempt} after ${prev.attempt}`);
      if (!r.owner || r.started_at === undefined) out.push(`${at}: claimed without owner or started_at`);
    } else if (prev.state === 'running' && r.state === 'queued') {
      if (r.attempt !== prev.attempt || r.owner !== undefined) out.push(`${at}: requeued with a changed run`);
    } else if (prev.state === 'running' && TERMINAL.has(r.state)) {
      const byRecovery = r.state === 'failed' && /orphaned/.test(r.error ?? '');
      if (!byRecovery && (r.attempt !== prev.attempt || r.started_at !== prev.started_at)) {
        out.push(
          `${at}: finished by attempt ${r.attempt} (started ${r.started_at}) while attempt ${prev.attempt} held it`,
        );
      }
    } else if (prev.state === 'queued' && r.state === 'failed') {
      if (!/dependency/.test(r.error ?? '')) out.push(`${at}: queued → failed without a failed dependency`);
    } else out.push(`${at}: ${prev.state} → ${r.state}`);
    prev = r;
  }
  return out;
}

/** The terminal records of a task (a sound history has exactly one, last). */
export function terminalRecords(changes: readonly TaskChange[]): TaskRecord[] {
  return changes.flatMap((c) => (c.record && TERMINAL.has(c.record.state) ? [c.record] : []));
}

/** Runs every cleanup step, newest first, even if some throw; then rethrows the first failure. */
export class Cleanup {
  readonly #steps: (() => unknown)[] = [];

  add(step: () => unknown): void {
    this.#steps.push(step);
  }

  async run(): Promise<void> {
    const failures: unknown[] = [];
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        failures.push(err);
      }
    }
    const first = failures[0];
    if (first instanceof Error) throw first;
    if (failures.length > 0) throw new Error(`cleanup failed: ${String(first)}`);
  }
}
