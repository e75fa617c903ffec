/**
 * What runs against the fleet throughout: an API probe of every host, and a small enqueue load
 * against random hosts. Both record every answer; the test judges them afterwards.
 */
import type { Random } from '@maintd/core';
import type { Host } from './fleet.js';

/** One answer (or none: `status` 0) of a host, and whether the host was restarting. */
export interface Answer {
  readonly host: string;
  readonly what: string;
  readonly status: number;
  readonly restarting: boolean;
  readonly error?: string;
}

async function call(
  host: Host,
  what: string,
  path: string,
  init: RequestInit = {},
): Promise<{ answer: Answer; body: unknown }> {
  const sent = performance.now();
  let status = 0;
  let body: unknown;
  let error: string | undefined;
  try {
    const res = await fetch(`${host.url}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    status = res.status;
    const text = await res.text();
    body = text ? (JSON.parse(text) as unknown) : undefined;
  } catch (err) {
    error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
  const restarting = host.restartingAt(sent) || host.restartingAt(performance.now());
  return { answer: { host: host.name, what, status, restarting, ...(error ? { error } : {}) }, body };
}

/** A loop that runs `step` every `everyMs` until stopped; `stop()` waits for the last step. */
function loop(everyMs: number, step: () => Promise<void>): { stop(): Promise<void> } {
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      await step();
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** Probes every host's task list and master list every `everyMs`. */
export function probeApis(hosts: readonly Host[], answers: Answer[], everyMs = 500): { stop(): Promise<void> } {
  return loop(everyMs, async () => {
    await Promise.all(
      hosts.flatMap((h) => [
        call(h, 'GET /api/v1/tasks', '/api/v1/tasks?limit=20').then((r) => answers.push(r.answer)),
        call(h, 'GET /api/v1/masters', '/api/v1/masters').then((r) => answers.push(r.answer)),
      ]),
    );
  });
}

/** One enqueue the load made, and the id the master answered with. */
export interface Enqueued extends Answer {
  readonly kind: string;
  readonly target: string;
  readonly release: string | undefined;
  readonly id?: string;
}

/**
 * Enqueues a manual task every `everyMs` through a random host that is not restarting: `merge_wal`
 * on a random store, or the extra kind where that host runs N (and, now and then, where it runs
 * N-1, which must refuse it).
 */
export function enqueueLoad(
  hosts: readonly Host[],
  stores: readonly string[],
  extraKind: string,
  random: Random,
  out: Enqueued[],
  everyMs = 300,
): { stop(): Promise<void> } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random.next() * xs.length)]!;
  return loop(everyMs, async () => {
    const live = hosts.filter((h) => h.current && !h.restartingAt(performance.now()));
    if (live.length === 0) return;
    const host = pick(live);
    const release = host.current?.release;
    const r = random.next();
    const kind = release === 'N' ? (r < 0.4 ? extraKind : 'merge_wal') : r < 0.1 ? extraKind : 'merge_wal';
    const target = pick(stores);
    const { answer, body } = await call(host, `POST /api/v1/tasks ${kind}`, '/api/v1/tasks', {
      method: 'POST',
      body: JSON.stringify({ kind, target }),
    });
    const id = (body as { id?: unknown } | undefined)?.id;
    out.push({ ...answer, kind, target, release, ...(typeof id === 'string' ? { id } : {}) });
  });
}

/** Answers that break "every live master answers; 5xx only as 503, only while it restarts". */
export function badAnswers(answers: readonly Answer[], ok: (a: Answer) => boolean): string[] {
  return answers
    .filter((a) => !ok(a))
    .map((a) => `${a.host} ${a.what}: ${a.status || a.error || 'no answer'}${a.restarting ? ' (restarting)' : ''}`);
}
