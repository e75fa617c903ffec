import { FakeClock, seededRandom } from '@maintd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeMaster, auditEntry, cooldown, park, startFakeMaster } from '../../test/fake-master.js';
import { MaintdClient } from '../api/client.js';
import { type FeedOptions, FleetFeed, deriveConnection } from './feed.js';
import type { FleetSnapshot } from './source.js';

const feeds: FleetFeed[] = [];
const fakes: FakeMaster[] = [];
afterEach(async () => {
  await Promise.all(feeds.splice(0).map((f) => f.stop()));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

async function fake(...args: Parameters<typeof startFakeMaster>): Promise<FakeMaster> {
  const f = await startFakeMaster(...args);
  fakes.push(f);
  return f;
}

function feedFor(url: string, over: Partial<FeedOptions> = {}): FleetFeed {
  const feed = new FleetFeed({
    client: new MaintdClient({ url, timeoutMs: over.refreshMs ? over.refreshMs * 2 : 1000 }),
    refreshMs: 100,
    flushMs: 10,
    maxBackoffMs: 200,
    ...over,
  });
  feeds.push(feed);
  feed.start();
  return feed;
}

/** Waits until the feed's snapshot satisfies `ok`. */
async function until(feed: FleetFeed, ok: (s: FleetSnapshot) => boolean, ms = 5000): Promise<FleetSnapshot> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const s = feed.getSnapshot();
    if (ok(s)) return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out; last connection: ${JSON.stringify(feed.getSnapshot().connection)}`);
}

describe('deriveConnection', () => {
  it('is live with the stream open, polling without it, disconnected when nothing answers', () => {
    const base = { error: undefined, lastUpdateMs: undefined };
    expect(deriveConnection({ ...base, streamOpen: true, pollOk: false }).state).toBe('live');
    expect(deriveConnection({ ...base, streamOpen: false, pollOk: true }).state).toBe('polling');
    expect(deriveConnection({ ...base, streamOpen: false, pollOk: false }).state).toBe('disconnected');
    expect(deriveConnection({ ...base, streamOpen: false, pollOk: undefined }).state).toBe('connecting');
  });
});

describe('FleetFeed', () => {
  it('loads every list, then goes live on the event stream', async () => {
    const f = await fake({ workers: [{ endpoint: 'http://w1', ok: true, error: null, last_scan_at: 1, stores: 2 }] });
    f.state.cooldowns.set('merge_wal/a', cooldown('a'));
    const feed = feedFor(f.url);
    const s = await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns !== undefined);
    expect(s.data.masters?.map((m) => m.id)).toEqual(['master-a']);
    expect(s.data.workers).toHaveLength(1);
    expect([...s.data.cooldowns!.keys()]).toEqual(['merge_wal/a']);
    expect(s.data.guardOverflow).toEqual({ merge_wal: 0, compact: 0 });
    expect(s.data.counts).toEqual({
      merge_wal: { queued: 0, running: 0 },
      compact: { queued: 0, running: 0 },
      index_id: { queued: 0, running: 0 },
    });
  });

  it('applies live events between polls', async () => {
    const f = await fake();
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns !== undefined);
    await until(feed, () => f.clients === 1);
    f.emit({ type: 'cooldown', revision: 9, kind: 'merge_wal', target: 'b', cooldown: cooldown('b', { failures: 5 }) });
    const s = await until(feed, (x) => x.data.cooldowns?.has('merge_wal/b') === true, 2000);
    expect(s.data.cooldowns!.get('merge_wal/b')?.failures).toBe(5);
    f.emit({ type: 'cooldown', revision: 10, kind: 'merge_wal', target: 'b', cooldown: null });
    await until(feed, (x) => x.data.cooldowns?.has('merge_wal/b') === false, 2000);
  });

  it('re-reads what changed while its stream was down: after an overflow it reconnects and resyncs', async () => {
    const f = await fake();
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns !== undefined);
    // A change the stream never delivers: only a full re-read can find it.
    f.state.cooldowns.set('merge_wal/missed', cooldown('missed'));
    f.overflow();
    await until(feed, (x) => x.data.cooldowns?.has('merge_wal/missed') === true);
    await until(feed, (x) => x.connection.state === 'live');
    await until(feed, () => f.clients === 1);
  });

  it('falls back to polling when the event stream is unavailable', async () => {
    const f = await fake();
    // A fetch that refuses only the event stream.
    const noEvents: typeof fetch = (input, init) =>
      String(input instanceof Request ? input.url : input).endsWith('/api/v1/events')
        ? Promise.reject(new TypeError('fetch failed'))
        : fetch(input, init);
    const feed = feedFor(f.url, { fetch: noEvents });
    await until(feed, (x) => x.connection.state === 'polling' && x.data.cooldowns !== undefined);
    f.state.cooldowns.set('merge_wal/late', cooldown('late'));
    await until(feed, (x) => x.data.cooldowns?.has('merge_wal/late') === true);
    expect(feed.getSnapshot().connection.state).toBe('polling');
  });

  it('shows disconnected when the master dies and live data again when it is back on the same port', async () => {
    const f = await fake();
    const feed = feedFor(f.url);
    await until(feed, (x) => x.connection.state === 'live');
    const port = f.port;
    fakes.splice(fakes.indexOf(f), 1);
    await f.close();
    const down = await until(feed, (x) => x.connection.state === 'disconnected');
    expect(down.connection.error).toMatch(/refused|closed|reset/);
    const again = await fake({}, port);
    again.state.cooldowns.set('merge_wal/new', cooldown('new'));
    await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns?.has('merge_wal/new') === true);
  });

  it('never waits on a slow master longer than its timeout, keeping the last data', async () => {
    const f = await fake();
    f.state.cooldowns.set('merge_wal/a', cooldown('a'));
    const feed = feedFor(f.url, { refreshMs: 100 });
    await until(feed, (x) => x.data.cooldowns?.size === 1);
    f.state.hang = true;
    f.dropConnections();
    const s = await until(
      feed,
      (x) => x.connection.state === 'disconnected' && /no answer within/.test(x.connection.error ?? ''),
      3000,
    );
    expect(s.data.cooldowns?.size).toBe(1);
  });

  it('replays events that arrive during a slow poll on top of its (older) result', async () => {
    const f = await fake();
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns !== undefined);
    await until(feed, () => f.clients === 1);
    await new Promise((r) => setTimeout(r, 200)); // the poll the stream's hello asked for is over
    // The next full read is answered late, from state that predates the event sent meanwhile.
    f.state.delayMs = 300;
    const before = f.state.requests.length;
    feed.refresh();
    const reading = (): boolean =>
      f.state.requests.slice(before).some((r) => r.startsWith('GET /api/v1/scheduler/cooldowns'));
    await until(feed, reading);
    f.emit({ type: 'cooldown', revision: 20, kind: 'merge_wal', target: 'fresh', cooldown: cooldown('fresh') });
    await until(feed, (x) => x.data.cooldowns?.has('merge_wal/fresh') === true);
    await new Promise((r) => setTimeout(r, 500)); // the late read has landed
    expect(feed.getSnapshot().data.cooldowns?.has('merge_wal/fresh')).toBe(true);
  });

  it('reconnects its event stream after doubling, jittered waits up to the cap, and starts over once a stream opens', async () => {
    const clock = new FakeClock();
    const attempts: number[] = [];
    let openNext = false;
    let hangUp: (() => void) | undefined;
    const refused = (): Promise<Response> => Promise.reject(new TypeError('fetch failed'));
    const events: typeof fetch = () => {
      attempts.push(clock.now());
      if (!openNext) return refused();
      openNext = false;
      // The master says hello, then hangs up when the test says so.
      const body = new ReadableStream<Uint8Array>({
        start: (c) => {
          c.enqueue(new TextEncoder().encode('event: hello\ndata: {"master_id":"m"}\n\n'));
          hangUp = () => c.close();
        },
      });
      return Promise.resolve(new Response(body));
    };
    const feed = new FleetFeed({
      client: new MaintdClient({ url: 'http://master.invalid', timeoutMs: 1000, fetch: refused }),
      refreshMs: 60_000,
      maxBackoffMs: 2000,
      clock,
      random: seededRandom(7),
      fetch: events,
    });
    feeds.push(feed);
    feed.start();
    // The same draws the feed makes, in the same order: half to all of each nominal wait.
    const draws = seededRandom(7);
    const jittered = (nominal: number): number => Math.floor(nominal * (0.5 + draws.next() / 2));
    const gaps = (times: readonly number[]): number[] => times.slice(1).map((t, i) => t - times[i]!);

    await clock.advance(10_000);
    const refusals = gaps(attempts);
    expect(refusals.length).toBeGreaterThanOrEqual(6);
    expect(refusals).toEqual(refusals.map((_, i) => jittered(Math.min(250 * 2 ** i, 2000))));
    jittered(2000); // the wait that was running when the clock stopped

    openNext = true;
    while (!hangUp) await clock.advance(100);
    const opened = attempts.length;
    await until(feed, (x) => x.connection.state === 'live');
    hangUp();
    // Time stands still until the test moves it: the feed is now waiting from this instant.
    await until(feed, (x) => x.connection.state !== 'live');
    const closedAt = clock.now();
    await clock.advance(10_000);
    const after = gaps([closedAt, ...attempts.slice(opened)]);
    expect(after.length).toBeGreaterThanOrEqual(3);
    expect(after.slice(0, 3)).toEqual([jittered(250), jittered(500), jittered(1000)]);
  });
});

describe('FleetFeed coalescing and re-reads', () => {
  it('reads the stream at most once per flush period (50 ms, timed by its clock), each read one update', async () => {
    const f = await fake();
    const clock = new FakeClock(Date.now());
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000, flushMs: undefined, clock });
    await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns !== undefined);
    await until(feed, () => f.clients === 1);
    await new Promise((r) => setTimeout(r, 200)); // the poll the stream's hello asked for is over
    // The hello's read was the last one: the next waits for the period after it.
    await clock.advance(50);
    let updates = 0;
    feed.subscribe(() => updates++);
    const size = (): number => feed.getSnapshot().data.cooldowns?.size ?? 0;
    f.emit({ type: 'cooldown', revision: 99, kind: 'merge_wal', target: 'first', cooldown: cooldown('first') });
    // The first change after a quiet spell: applied at once.
    await until(feed, () => size() === 1, 2000);
    expect(updates).toBe(1);
    for (let i = 0; i < 30; i++) {
      f.emit({ type: 'cooldown', revision: 100 + i, kind: 'merge_wal', target: `t${i}`, cooldown: cooldown(`t${i}`) });
    }
    // Every event is in; none is read until the period ends.
    await new Promise((r) => setTimeout(r, 200));
    expect(updates).toBe(1);
    await clock.advance(49);
    await new Promise((r) => setTimeout(r, 50));
    expect(updates).toBe(1);
    await clock.advance(1);
    await until(feed, () => size() > 1, 2000);
    // Fetch may have queued a piece of the burst apart from the rest: a read (and update) each
    // period until all are in.
    let periods = 1;
    while (size() < 31 && periods < 10) {
      await new Promise((r) => setTimeout(r, 50));
      await clock.advance(50);
      periods++;
    }
    await until(feed, () => size() === 31, 2000);
    expect(updates - 1).toBeLessThanOrEqual(periods);
    expect(updates - 1).toBeLessThan(5);
  });

  it('reads the master’s matches of a Tasks search beside the newest tasks, and drops them once the search is cleared', async () => {
    const f = await fake();
    const old = {
      id: '01a23766-0000-7000-8000-000000000001',
      kind: 'merge_wal',
      target: 'old-store',
      state: 'failed' as const,
      source: 'sweep' as const,
      enqueued_at: 1,
      attempt: 1,
      error: 'lost fragment',
    };
    f.state.tasks.push(old);
    // 200 newer tasks: the old failure is past the newest page.
    for (let i = 0; i < 200; i++)
      f.state.tasks.push({
        ...old,
        id: `01a23766-0000-7000-9000-${String(i).padStart(12, '0')}`,
        target: `s${i}`,
        state: 'done',
        error: undefined,
      });
    const feed = feedFor(f.url);
    await until(feed, (x) => x.data.tasks?.size === 200);
    expect(feed.getSnapshot().data.tasks?.has(old.id)).toBe(false);
    feed.search('tasks', 'LOST FRAGMENT');
    await until(feed, (x) => x.data.tasks?.has(old.id) === true);
    expect(f.state.requests).toContain('GET /api/v1/tasks?limit=200&q=LOST%20FRAGMENT');
    feed.search('tasks', '');
    await until(feed, (x) => x.data.tasks?.has(old.id) === false);
  });

  it('reads held tasks however old they are; a master that refuses state=held costs only them', async () => {
    const f = await fake();
    const base = { kind: 'merge_wal', source: 'sweep' as const, enqueued_at: 1, attempt: 0 };
    const heldTask = {
      ...base,
      id: '01a23766-0000-7000-8000-000000000001',
      target: 'parked-store',
      state: 'held' as const,
      held_at: 2,
      held_reason: 'parked by ops: disk swap',
    };
    f.state.tasks.push(heldTask);
    for (let i = 0; i < 200; i++)
      f.state.tasks.push({
        ...base,
        id: `01a23766-0000-7000-9000-${String(i).padStart(12, '0')}`,
        target: `s${i}`,
        state: 'done',
      });
    const feed = feedFor(f.url);
    const s = await until(feed, (x) => x.data.tasks?.has(heldTask.id) === true);
    expect(s.data.tasks?.get(heldTask.id)?.held_reason).toBe('parked by ops: disk swap');
    f.state.legacy = true;
    f.state.tasks.shift();
    await until(feed, (x) => x.data.tasks?.has(heldTask.id) === false);
    expect(feed.getSnapshot().connection.error).toBeUndefined();
  });

  it('reads the capacity and the causes at most every insightsMs, and marks them unsupported, without an error, on a master that predates them', async () => {
    const f = await fake();
    const feed = feedFor(f.url, { insightsMs: 60_000 });
    const s = await until(feed, (x) => Array.isArray(x.data.causes) && x.data.capacity !== undefined);
    expect(s.data.insightsError).toBeUndefined();
    const reads = (): number => f.state.requests.filter((r) => r === 'GET /api/v1/capacity').length;
    const polls = (): number => f.state.requests.filter((r) => r === 'GET /api/v1/workers').length;
    const at = polls();
    await until(feed, () => polls() >= at + 3);
    expect(reads()).toBe(1);

    const old = await fake();
    old.state.legacy = true;
    const legacy = feedFor(old.url, { insightsMs: 100 });
    const l = await until(legacy, (x) => x.data.causes === 'unsupported' && x.data.capacity === 'unsupported');
    expect(l.data.insightsError).toBeUndefined();
    expect(l.connection.error).toBeUndefined();
  });

  it('reads the policy with the first full read and again after the stream reconnects', async () => {
    const f = await fake();
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    const s = await until(feed, (x) => x.connection.state === 'live' && x.data.policy !== undefined);
    expect(s.data.policy?.threshold).toBe(3);
    const reads = (): number => f.state.requests.filter((r) => r === 'GET /api/v1/scheduler/policy').length;
    await until(feed, () => f.clients === 1);
    const before = reads();
    f.state.policy = { ...f.state.policy, guard_percent: 40 };
    f.overflow();
    await until(feed, (x) => x.data.policy?.guard_percent === 40);
    expect(reads()).toBeGreaterThan(before);
  });

  it('merges a re-read into the live maps: unchanged entries keep their identity, only changes move', async () => {
    const f = await fake();
    f.state.cooldowns.set('merge_wal/a', cooldown('a', { until_ms: Date.now() + 600_000 }));
    f.state.cooldowns.set('merge_wal/b', cooldown('b', { until_ms: Date.now() + 600_000 }));
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    const first = await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns?.size === 2);
    const map = first.data.cooldowns!;
    const a = map.get('merge_wal/a');
    f.state.cooldowns.set('merge_wal/b', cooldown('b', { until_ms: Date.now() + 600_000, failures: 7 }));
    feed.refresh();
    const next = await until(feed, (x) => x.data.cooldowns?.get('merge_wal/b')?.failures === 7);
    expect(next.data.cooldowns).toBe(map);
    expect(next.data.cooldowns!.get('merge_wal/a')).toBe(a);
  });

  it('adds the audit trail’s entries from the event stream to the activity log, a bulk action’s once', async () => {
    const f = await fake();
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns !== undefined);
    await until(feed, () => f.clients === 1);
    const bulk = auditEntry({
      id: 'bulk-1',
      who: 'bob',
      action: 'cooldowns.park',
      kind: undefined,
      target: undefined,
      filter: { q: 'quota' },
      outcome: 'parked',
      reason: 'disk \u001b[31mfull',
    });
    // The bulk action's entry comes again with each store it commits.
    for (const count of [1, 2, 3]) f.emit({ type: 'audit', revision: 40 + count, entry: { ...bulk, count } });
    const s = await until(feed, (x) => x.data.activity.some((a) => a.text.includes('parked 3')), 2000);
    expect(s.data.activity.map((a) => a.text)).toEqual(["bob@10.0.0.5 parked 3 stores matching 'quota': disk full"]);
  });

  it('reads the newest of the audit trail with each full read: the recent past at start, and what the stream missed, in time order', async () => {
    const T = Date.now() - 60_000;
    const f = await fake({
      audit: [
        auditEntry({ id: 'e2', at_ms: T + 2, who: 'bob', action: 'task.enqueue', outcome: 'queued' }),
        auditEntry({ id: 'e1', at_ms: T + 1 }),
      ],
    });
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    const s = await until(feed, (x) => x.connection.state === 'live' && x.data.activity.length === 2);
    expect(s.data.activity.map((a) => a.text)).toEqual([
      'alice@10.0.0.5 reset merge_wal cooldown of store-12',
      'bob@10.0.0.5 enqueued merge_wal on store-12',
    ]);
    expect(f.state.requests).toContain('GET /api/v1/audit?limit=20');
    // A newer line came over the stream; an older entry it missed turns up in the next read.
    await until(feed, () => f.clients === 1);
    f.emit({ type: 'audit', revision: 50, entry: auditEntry({ id: 'e4', at_ms: T + 4, who: 'dave' }) });
    await until(feed, (x) => x.data.activity.length === 3);
    f.state.audit.unshift(auditEntry({ id: 'e3', at_ms: T + 3, who: 'carol' }));
    feed.refresh();
    const after = await until(feed, (x) => x.data.activity.length === 4);
    expect(after.data.activity.map((a) => a.subject?.id)).toEqual(['e1', 'e2', 'e3', 'e4']);
    // Read again, nothing new: the log is the same object.
    feed.refresh();
    await new Promise((r) => setTimeout(r, 300));
    expect(feed.getSnapshot().data.activity).toBe(after.data.activity);
  });

  it('reads no audit trail from a master that predates it, and says nothing of it', async () => {
    const f = await fake({ legacy: true });
    // The default client timeout (1 s), not refreshMs × 2: on a loaded machine a read of the fake
    // master took over 200 ms, and its timeout is an error this test would take for the audit's.
    const feed = feedFor(f.url);
    const s = await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns !== undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(s.data.activity).toEqual([]);
    expect(feed.getSnapshot().connection.error).toBeUndefined();
  });

  it('notes a park a re-read found (the stream never said) in the activity log, once', async () => {
    const f = await fake();
    f.state.cooldowns.set('merge_wal/a', cooldown('a', { until_ms: Date.now() + 600_000 }));
    const feed = feedFor(f.url, { refreshMs: 60_000, resyncMs: 60_000 });
    await until(feed, (x) => x.connection.state === 'live' && x.data.cooldowns?.size === 1);
    f.state.cooldowns.set(
      'merge_wal/a',
      cooldown('a', { until_ms: Date.now() + 600_000, parked: park('quiet please') }),
    );
    feed.refresh();
    const s = await until(feed, (x) => x.data.activity.length > 0);
    expect(s.data.activity.map((a) => a.text)).toEqual(['parked merge_wal a (token@127.0.0.1): quiet please']);
    feed.refresh();
    await new Promise((r) => setTimeout(r, 300));
    expect(feed.getSnapshot().data.activity).toHaveLength(1);
  });
});
