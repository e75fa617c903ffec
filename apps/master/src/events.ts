import {
  type Clock,
  type Keys,
  type Kv,
  TaskCooldownSchema,
  TaskKindSchema,
  TaskRecordSchema,
  type Watch,
  targetFromHex,
} from '@maintd/core';
import { type MaintdEvent, cooldownView } from '@maintd/scheduler/api';
import type { Logger } from 'pino';

// The events' shapes are part of the API's route definitions (the OpenAPI document's event
// payload components), so that the document and the stream cannot drift apart.
export type { MaintdEvent };

/**
 * Fans task and cooldown changes out to subscribers, from one etcd watch per prefix per
 * process (not one per client). Re-opens its watches after a failure, from the last revision
 * seen, so a brief etcd outage loses no event.
 */
export class EventHub {
  readonly #kv: Kv;
  readonly #keys: Keys;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #listeners = new Set<(e: MaintdEvent) => void>();
  readonly #stop = new AbortController();
  #watches: Watch[] = [];
  #lastRevision = 0;
  #live = false;
  #generation = 0;
  #loop: Promise<void> | undefined;

  constructor(kv: Kv, keys: Keys, clock: Clock, logger: Logger) {
    this.#kv = kv;
    this.#keys = keys;
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Starts watching (in the background; an unreachable store is retried). */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Registers a listener; returns its unsubscribe function. */
  subscribe(listener: (e: MaintdEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * True while both watches are established: only then does every change reach listeners, so
   * only then may a listener trust a cache it invalidates on events.
   */
  get live(): boolean {
    return this.#live;
  }

  /** Changes whenever the watches are (re)established or lost; stamps caches built on events. */
  get generation(): number {
    return this.#generation;
  }

  /** Number of connected listeners. */
  get subscribers(): number {
    return this.#listeners.size;
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#watches.map((w) => w.close().catch(() => undefined)));
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const dead = new AbortController();
      try {
        const from = this.#lastRevision > 0 ? this.#lastRevision + 1 : undefined;
        const opts = { ...(from ? { fromRevision: from } : {}), onError: () => dead.abort() };
        const tasks = this.#keys.tasksPrefix;
        const cool = this.#keys.cooldownPrefix();
        this.#watches = [
          await this.#kv.watch(tasks, (events) => this.#onTasks(tasks, events), opts),
          await this.#kv.watch(cool, (events) => this.#onCooldowns(cool, events), opts),
        ];
        this.#live = true;
        this.#generation++;
        await new Promise<void>((resolve) => {
          dead.signal.addEventListener('abort', () => resolve(), { once: true });
          this.#stop.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      } catch (err) {
        this.#logger.debug({ err }, 'event watch failed; retrying');
      }
      this.#live = false;
      this.#generation++;
      await Promise.all(this.#watches.map((w) => w.close().catch(() => undefined)));
      this.#watches = [];
      if (dead.signal.aborted) this.#lastRevision = 0; // compacted or broken: resume from now
      try {
        await this.#clock.sleep(1000, this.#stop.signal);
      } catch {
        return;
      }
    }
  }

  #onTasks(
    prefix: string,
    events: readonly { type: 'put' | 'delete'; key: string; value: string; modRevision: number }[],
  ): void {
    for (const e of events) {
      this.#lastRevision = Math.max(this.#lastRevision, e.modRevision);
      if (e.type === 'delete') {
        this.#emit({ type: 'task_deleted', revision: e.modRevision, id: e.key.slice(prefix.length) });
        continue;
      }
      const parsed = TaskRecordSchema.safeParse(safeJson(e.value));
      if (parsed.success) this.#emit({ type: 'task', revision: e.modRevision, task: parsed.data });
    }
  }

  #onCooldowns(
    prefix: string,
    events: readonly { type: 'put' | 'delete'; key: string; value: string; modRevision: number }[],
  ): void {
    for (const e of events) {
      this.#lastRevision = Math.max(this.#lastRevision, e.modRevision);
      const [kindText, hex] = e.key.slice(prefix.length).split('/');
      const kind = TaskKindSchema.safeParse(kindText);
      if (!kind.success || !hex) continue;
      if (e.type === 'delete') {
        this.#emit({
          type: 'cooldown',
          revision: e.modRevision,
          kind: kind.data,
          target: targetFromHex(hex),
          cooldown: null,
        });
        continue;
      }
      const parsed = TaskCooldownSchema.safeParse(safeJson(e.value));
      if (parsed.success) {
        this.#emit({
          type: 'cooldown',
          revision: e.modRevision,
          kind: kind.data,
          target: parsed.data.target,
          cooldown: cooldownView(parsed.data),
        });
      }
    }
  }

  #emit(e: MaintdEvent): void {
    for (const l of this.#listeners) {
      try {
        l(e);
      } catch (err) {
        this.#logger.warn({ err }, 'event listener failed');
      }
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
