import type { ListTasksQuery, TaskRecord, TaskStore } from '@maintd/core';
import type { EventHub } from './events.js';
import { type JsonBytes, encodeJson } from './http/json-bytes.js';
import type { StoreProbe } from './store-probe.js';

/** Most distinct queries kept at once (the oldest goes first). */
const MAX_KEPT = 64;

/** One page of the task list as the API sends it. */
export interface TaskListBody {
  readonly tasks: TaskRecord[];
  readonly total: number;
  readonly next_cursor: string | null;
}

/** A task list page encoded once, with its next cursor for the `Link` header. */
export interface TaskList {
  readonly body: JsonBytes<TaskListBody>;
  readonly next: string | null;
}

interface Kept {
  readonly generation: number;
  readonly list: Promise<TaskList>;
  settled: boolean;
}

/**
 * Task list pages, shared by the readers of the same query and kept until the task watch
 * reports a change (the informer pattern): a fleet of dashboards polling the task list costs one
 * etcd read per change, not one per request, and never sees data older than the watch. A page is
 * kept only while the task watch is up to drop it; a kept page is served only once the
 * {@link StoreProbe} vouches that etcd answers (the list rule: a list answers 503 while etcd is
 * away). Without a hub every read is a store read.
 */
export class TaskLists {
  readonly #store: TaskStore;
  readonly #hub: EventHub | undefined;
  readonly #probe: StoreProbe;
  readonly #kept = new Map<string, Kept>();

  constructor(store: TaskStore, hub: EventHub | undefined, probe: StoreProbe) {
    this.#store = store;
    this.#hub = hub;
    this.#probe = probe;
    hub?.onTasksChanged(() => this.clear());
  }

  /** Forgets every kept page: this master changed tasks, and its next read must show it. */
  clear(): void {
    this.#kept.clear();
  }

  /** One page of the task list. */
  async read(query: ListTasksQuery): Promise<TaskList> {
    const hub = this.#hub;
    if (!hub) return this.#fetch(query);
    const live = hub.tasksLive;
    hub.wantTasks();
    // The first read after a quiet spell waits (briefly) for the task watch it opened: until it
    // is up nothing can be kept, and a burst of readers would each read the list anew.
    if (!live) await hub.tasksWatched();
    if (!hub.tasksLive) return this.#fetch(query);
    const key = JSON.stringify(query);
    const generation = hub.taskGeneration;
    const hit = this.#kept.get(key);
    if (hit && hit.generation === generation) {
      // A read still in flight is its own round trip; a settled one needs the probe's word.
      if (hit.settled) await this.#probe.vouch();
      return hit.list;
    }
    const kept: Kept = { generation, list: this.#fetch(query), settled: false };
    this.#kept.set(key, kept);
    kept.list.then(
      () => (kept.settled = true),
      () => {
        if (this.#kept.get(key) === kept) this.#kept.delete(key);
      },
    );
    if (this.#kept.size > MAX_KEPT) {
      const oldest = this.#kept.keys().next();
      if (!oldest.done) this.#kept.delete(oldest.value);
    }
    return kept.list;
  }

  async #fetch(query: ListTasksQuery): Promise<TaskList> {
    const page = await this.#store.listTasks(query);
    return {
      body: encodeJson<TaskListBody>({ tasks: [...page.tasks], total: page.total, next_cursor: page.nextCursor }),
      next: page.nextCursor,
    };
  }
}
