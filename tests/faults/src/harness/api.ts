import type { TaskCooldown, TaskRecord } from '@maintd/core';

/** A thin client of one master's HTTP API, for assertions. */
export class Api {
  constructor(
    readonly url: string,
    private readonly token?: string,
  ) {}

  async #json<T>(path: string, init: RequestInit = {}, timeoutMs = 10_000): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.url}/api/v1${path}`, {
      ...init,
      headers: {
        'content-type': 'application/json',
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(init.headers as Record<string, string> | undefined),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** `POST /tasks`; throws unless it answers 200 or 202. */
  async enqueue(kind: string, target: string, dependsOn?: readonly string[]): Promise<TaskRecord> {
    const { status, body } = await this.#json<TaskRecord>('/tasks', {
      method: 'POST',
      body: JSON.stringify({ kind, target, ...(dependsOn ? { depends_on: dependsOn } : {}) }),
    });
    if (status !== 200 && status !== 202)
      throw new Error(`enqueue ${kind} ${target}: HTTP ${status} ${JSON.stringify(body)}`);
    return body;
  }

  async task(id: string): Promise<TaskRecord> {
    const { status, body } = await this.#json<TaskRecord>(`/tasks/${encodeURIComponent(id)}`);
    if (status !== 200) throw new Error(`task ${id}: HTTP ${status}`);
    return body;
  }

  /** Every task, following cursors (newest first). */
  async allTasks(query: Record<string, string> = {}): Promise<TaskRecord[]> {
    const out: TaskRecord[] = [];
    let cursor: string | undefined;
    for (;;) {
      const q = new URLSearchParams({ ...query, limit: '200', ...(cursor ? { cursor } : {}) });
      const { status, body } = await this.#json<{ tasks: TaskRecord[]; next_cursor: string | null }>(
        `/tasks?${q.toString()}`,
      );
      if (status !== 200) throw new Error(`list tasks: HTTP ${status} ${JSON.stringify(body)}`);
      out.push(...body.tasks);
      if (!body.next_cursor) return out;
      cursor = body.next_cursor;
    }
  }

  async cooldowns(all = true): Promise<TaskCooldown[]> {
    const { status, body } = await this.#json<TaskCooldown[]>(`/scheduler/cooldowns${all ? '?all=true' : ''}`);
    if (status !== 200) throw new Error(`cooldowns: HTTP ${status}`);
    return body;
  }

  async masters(): Promise<{ id: string }[]> {
    const { status, body } = await this.#json<{ masters: { id: string }[] }>('/masters');
    if (status !== 200) throw new Error(`masters: HTTP ${status}`);
    return body.masters;
  }

  /** Any path under `/api/v1`, raw. */
  async raw(
    path: string,
    init: RequestInit = {},
    timeoutMs = 10_000,
  ): Promise<{ status: number; text: string; ms: number }> {
    const t0 = performance.now();
    const res = await fetch(`${this.url}/api/v1${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, text: await res.text(), ms: performance.now() - t0 };
  }
}
