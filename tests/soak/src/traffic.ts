import { setTimeout as delay } from 'node:timers/promises';
import { eventually } from '@maintd/faults/harness/processes';
import { FleetFeed, MaintdClient } from '@maintd/tui';
import type { ErrorLog } from './errors.js';
import type { Fleet } from './fleet.js';

/** What the readers of issue #45 fetch from each master about once a second. */
export const READER_PATHS = [
  '/api/v1/tasks?limit=50',
  '/api/v1/scheduler/cooldowns?limit=50&state=cooling',
  '/api/v1/scheduler/cooldowns',
  '/api/v1/stores?limit=50',
] as const;

/**
 * Deadline of each request: the soak judges growth, not latency, and runs beside other work on a
 * shared machine, where a dashboard's 5 s deadline would count the machine's load as an error.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Counts of what the traffic did. */
export interface TrafficCounts {
  reads: number;
  events: number;
  manualRuns: number;
  parks: number;
  releases: number;
  feedUpdates: number;
}

async function get(url: string, errors: ErrorLog, source: string, init: RequestInit = {}): Promise<boolean> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await res.arrayBuffer();
    if (res.status >= 300) {
      errors.record(source, `${init.method ?? 'GET'} ${url}: HTTP ${res.status}`);
      return false;
    }
    return true;
  } catch (err) {
    errors.record(source, `${init.method ?? 'GET'} ${url}: ${String(err)}`);
    return false;
  }
}

/** Runs `step` every `everyMs` until `signal` aborts (a slow step delays the next, never overlaps it). */
async function every(everyMs: number, signal: AbortSignal, step: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; !signal.aborted; i++) {
    await step(i);
    await delay(everyMs, undefined, { signal }).catch(() => undefined);
  }
}

/** Reads one master's `/api/v1/events` stream, counting chunks, until `signal` aborts. */
async function followEvents(url: string, signal: AbortSignal, errors: ErrorLog, counts: TrafficCounts): Promise<void> {
  while (!signal.aborted) {
    try {
      const res = await fetch(`${url}/api/v1/events`, { signal });
      if (res.status !== 200 || !res.body) {
        errors.record('event stream', `${url}: HTTP ${res.status}`);
      } else {
        for await (const chunk of res.body) counts.events += (chunk as Uint8Array).length > 0 ? 1 : 0;
        if (!signal.aborted) errors.record('event stream', `${url}: closed by the master`);
      }
    } catch (err) {
      if (!signal.aborted) errors.record('event stream', `${url}: ${String(err)}`);
    }
    await delay(1000, undefined, { signal }).catch(() => undefined);
  }
}

/** Names of the fleet's stores as master `url` lists them (the first 200). */
async function storeNames(url: string): Promise<string[]> {
  const res = await fetch(`${url}/api/v1/stores?limit=200`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const body = (await res.json()) as { stores?: { name: string }[] };
  return (body.stores ?? []).map((s) => s.name);
}

/**
 * The soak's clients, until `signal` aborts: readers of both masters and of the exporter's
 * `/metrics` (once a second), one raw event stream on master a and the dashboard's feed
 * (`FleetFeed`: its own stream and paged reads) on master b, a manual run every 5 s, and every
 * 2 minutes a park of a broken and a healthy store (one lapsing by itself after a minute, one
 * released by the API after a minute).
 */
export async function runTraffic(fleet: Fleet, signal: AbortSignal, errors: ErrorLog): Promise<TrafficCounts> {
  const counts: TrafficCounts = { reads: 0, events: 0, manualRuns: 0, parks: 0, releases: 0, feedUpdates: 0 };
  const [a, b] = fleet.masters;
  if (!a || !b) throw new Error('the soak runs two masters');
  const listed = await eventually(
    async () => {
      const names = await storeNames(a.url);
      if (names.length === 0) throw new Error('the master lists no store yet');
      return names;
    },
    60_000,
    1000,
  );
  const healthy = listed.filter((n) => !fleet.workers.broken.includes(n));
  const broken = fleet.workers.broken;

  const feed = new FleetFeed({
    client: new MaintdClient({ url: b.url, timeoutMs: REQUEST_TIMEOUT_MS }),
    refreshMs: 2000,
  });
  let lastFeedError: string | undefined;
  const unsubscribe = feed.subscribe(() => {
    counts.feedUpdates++;
    const { connection } = feed.getSnapshot();
    if (connection.error && connection.error !== lastFeedError) errors.record('dashboard feed', connection.error);
    lastFeedError = connection.error;
  });
  feed.start();

  const readers = every(1000, signal, async () => {
    const urls = [
      ...fleet.masters.flatMap((m) => READER_PATHS.map((p) => `${m.url}${p}`)),
      `${fleet.exporter.url}/metrics`,
    ];
    const ok = await Promise.all(urls.map((u) => get(u, errors, 'reader')));
    counts.reads += ok.filter(Boolean).length;
  });

  const post = (url: string, path: string, method: string, body?: unknown): Promise<boolean> =>
    get(`${url}/api/v1${path}`, errors, 'operator', {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const manual = every(5000, signal, async (i) => {
    const pool = i % 4 === 0 ? broken : healthy;
    const target = pool[(i * 7) % pool.length];
    if (!target) return;
    const kind = i % 3 === 0 ? 'compact' : 'merge_wal';
    if (await post(fleet.masters[i % 2]!.url, '/tasks', 'POST', { kind, target })) counts.manualRuns++;
  });

  const parks = every(120_000, signal, async (i) => {
    const lapsing = broken[i % broken.length];
    const released = healthy[(i * 13) % Math.max(1, healthy.length)];
    const until = new Date(Date.now() + 60_000).toISOString();
    if (lapsing && (await post(a.url, `/scheduler/cooldowns/compact/${lapsing}`, 'PUT', { reason: 'soak', until })))
      counts.parks++;
    if (released && (await post(b.url, `/scheduler/cooldowns/merge_wal/${released}`, 'PUT', { reason: 'soak' }))) {
      counts.parks++;
      await delay(60_000, undefined, { signal }).catch(() => undefined);
      // A release is a DELETE of the pair (it resets the failure count too); through the other master.
      if (await post(a.url, `/scheduler/cooldowns/merge_wal/${released}`, 'DELETE')) counts.releases++;
    }
  });

  await Promise.all([readers, manual, parks, followEvents(a.url, signal, errors, counts)]);
  unsubscribe();
  await feed.stop();
  return counts;
}
