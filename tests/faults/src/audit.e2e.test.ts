/**
 * The audit trail under six real masters and a SIGKILL (docs/ARCHITECTURE.md §2.9): operators
 * enqueue, park, reset, release, bulk-park, bulk-reset and change the cluster record through the
 * APIs of different masters at once, while one master is killed in the middle of a bulk reset of
 * 2,000 stores. Judged on etcd's own history, revision by revision: every committed mutation has
 * its audit entry written at the very revision it committed at, no entry (or bulk count) exists
 * without a mutation committed with it, the killed bulk's count is exactly the resets it
 * committed, and the trail names the tokens' names, never a token.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuditEntry, AuditEntrySchema, EtcdKv, TaskStore, type WatchEvent, targetFromHex } from '@maintd/core';
import { type EtcdServer, startEtcd } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from './harness/api.js';
import { uniquePrefix } from './harness/cluster-fixture.js';
import { type Master, eventually, startMaster } from './harness/processes.js';
import { recordFigures } from './harness/report.js';
import { ResumingWatch } from './harness/resuming-watch.js';

const MASTERS = 6;
/** Stores the killed master's bulk reset matches: 40 transactions of 50. */
const BIG = 2000;
/** Stores the other operators work on, of each kind. */
const SMALL = 120;
const TOKENS = { 'ops-alice': randomBytes(24).toString('hex'), 'ops-bob': randomBytes(24).toString('hex') };

/** What etcd's history says committed at one revision, and the audit entries written with it. */
interface AtRevision {
  parks: string[];
  releases: string[];
  resets: string[];
  tasks: string[];
  cluster: number;
  /** Audit entries put at this revision, with how much a bulk entry's count grew. */
  audit: { entry: AuditEntry; created: boolean; grew: number }[];
}

describe('the audit trail under six masters and a SIGKILL', () => {
  let etcd: EtcdServer;
  const masters: Master[] = [];
  let prefix: string;

  beforeAll(async () => {
    etcd = await startEtcd();
    prefix = uniquePrefix('audit');
    const dir = await mkdtemp(join(tmpdir(), 'maintd-audit-'));
    const tokensFile = join(dir, 'api-tokens');
    const sha = (t: string): string => createHash('sha256').update(t).digest('hex');
    await writeFile(
      tokensFile,
      Object.entries(TOKENS)
        .map(([name, token]) => `${name} operate sha256:${sha(token)}\n`)
        .join(''),
      { mode: 0o600 },
    );
    await chmod(tokensFile, 0o600);
    const env = { ETCD_ENDPOINTS: etcd.clientUrl, ETCD_PREFIX: prefix, MASTER_API_TOKENS_FILE: tokensFile };
    masters.push(
      ...(await Promise.all(Array.from({ length: MASTERS }, (_, i) => startMaster(env, { id: `audit-${i}` })))),
    );
  });

  afterAll(async () => {
    await Promise.all(masters.map((m) => m.stop()));
    await etcd?.stop();
  });

  it('writes exactly one entry per committed mutation, at its revision, and a killed bulk counts what it committed', async () => {
    const kv = new EtcdKv({ endpoints: [etcd.clientUrl] });
    // Failure records to reset and park, written as a scheduler's would be (below the threshold).
    const seeder = await TaskStore.open({ kv, prefix, masterId: 'test-seeder' });
    const big = Array.from({ length: BIG }, (_, i) => `big-${String(i).padStart(4, '0')}`);
    const small = Array.from({ length: SMALL }, (_, i) => `s-${String(i).padStart(3, '0')}`);
    const failures = [
      ...big.map((t) => ['compact', t] as const),
      ...small.flatMap((t) => [['compact', t] as const, ['merge_wal', t] as const]),
    ];
    for (let i = 0; i < failures.length; i += 100) {
      await Promise.all(
        failures.slice(i, i + 100).map(([k, t], j) => seeder.recordFailure(k, t, `seed-${i + j}`, 'boom', 'target')),
      );
    }
    await seeder.close();

    // etcd's history of the prefix from here on: the ground truth.
    const changes: WatchEvent[] = [];
    const history = await ResumingWatch.start(kv, `${prefix}/`, (e) => changes.push(e));
    const apis = masters.map((m) => new Api(m.url));
    const victim = masters[MASTERS - 1]!;
    const send = async (i: number, path: string, method: string, body?: unknown): Promise<number> => {
      try {
        const res = await apis[i % MASTERS]!.raw(path, {
          method,
          headers: {
            authorization: `Bearer ${i % 2 === 0 ? TOKENS['ops-alice'] : TOKENS['ops-bob']}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return res.status;
      } catch {
        // The killed master's requests fail; whether they committed, the history says.
        return 0;
      }
    };

    // The victim starts a bulk reset of the 2,000 big stores and dies once its first chunk commits.
    let killedAt: number | undefined;
    const killer = await ResumingWatch.start(kv, `${prefix}/audit/`, (e) => {
      if (killedAt !== undefined || e.type !== 'put' || !e.value.includes('"cooldowns.reset"')) return;
      if (!e.value.includes(`"master_id":"${victim.id}"`)) return;
      killedAt = e.modRevision;
      victim.kill('SIGKILL');
    });
    const bulkOnVictim = send(MASTERS - 1, '/scheduler/cooldowns?kind=compact&q=big', 'DELETE');

    // Meanwhile every kind of mutation through the other masters, eight lanes at once.
    const statuses: number[] = [];
    const work: (() => Promise<number>)[] = [];
    small.forEach((t, i) => {
      work.push(() => send(i, `/scheduler/cooldowns/compact/${t}`, 'PUT', { reason: `lane park ${i}` }));
      work.push(() => send(i + 1, '/tasks', 'POST', { kind: 'compact', target: t }));
      // A second enqueue of a store is a dedupe hit while its task is still active: no entry then.
      work.push(() => send(i + 2, '/tasks', 'POST', { kind: 'compact', target: t }));
      if (i % 3 === 0) work.push(() => send(i + 3, `/scheduler/cooldowns/merge_wal/${t}`, 'DELETE'));
      if (i % 4 === 0) work.push(() => send(i + 4, `/scheduler/cooldowns/compact/${t}`, 'DELETE'));
      if (i % 10 === 0) {
        work.push(() =>
          send(i, `/scheduler/cooldowns?kind=merge_wal&q=s-${String(i).padStart(3, '0').slice(0, 2)}`, 'DELETE'),
        );
        work.push(() =>
          send(i + 1, `/scheduler/cooldowns?kind=merge_wal&q=s-0${String(i).slice(-2, -1)}`, 'PUT', { reason: 'bulk' }),
        );
        work.push(() => send(i + 2, '/cluster', 'PATCH', { preserve_downgrade: i % 20 === 0 }));
      }
    });
    // A reset of what has nothing commits nothing: no entry.
    work.push(() => send(0, '/scheduler/cooldowns/compact/never-failed', 'DELETE'));
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let job = work[next++]; job; job = work[next++]) statuses.push(await job());
      }),
    );
    expect(await bulkOnVictim).toBe(0);
    expect(await victim.exited).toBe('SIGKILL');
    // Every request to a live master answered: 200 or 202, 404 for what had nothing left, or
    // 503 for a contended one (the history says whether it committed).
    expect(statuses.filter((s) => s !== 0 && ![200, 202, 404, 503].includes(s))).toEqual([]);

    // The history up to the store's revision now (the tasks have failed: no workers), then judged
    // revision by revision.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const last = await kv.revision(`${prefix}/`);
    await eventually(() => expect(history.lastRevision).toBeGreaterThanOrEqual(last), 20_000);
    const byRevision = new Map<number, AtRevision>();
    const at = (r: number): AtRevision => {
      let x = byRevision.get(r);
      if (!x) byRevision.set(r, (x = { parks: [], releases: [], resets: [], tasks: [], cluster: 0, audit: [] }));
      return x;
    };
    const counts = new Map<string, number>();
    const pairOf = (key: string, area: string): string => {
      const [kind, hex] = key.slice(`${prefix}/${area}/`.length).split('/');
      return `${kind}/${targetFromHex(hex!)}`;
    };
    const masterIds = new Set(masters.map((m) => m.id));
    const tasksSeen = new Set<string>();
    for (const e of changes) {
      const r = at(e.modRevision);
      if (e.key.startsWith(`${prefix}/parked/`))
        (e.type === 'put' ? r.parks : r.releases).push(pairOf(e.key, 'parked'));
      else if (e.key.startsWith(`${prefix}/cooldown/`) && e.type === 'delete') r.resets.push(pairOf(e.key, 'cooldown'));
      else if (e.key.startsWith(`${prefix}/tasks/`) && e.type === 'put') {
        // A task's first write is its enqueue (none existed before the history started).
        const id = e.key.slice(`${prefix}/tasks/`.length);
        if (!tasksSeen.has(id)) r.tasks.push(id);
        tasksSeen.add(id);
      } else if (e.key === `${prefix}/cluster` && e.type === 'put') {
        if (!masterIds.has((JSON.parse(e.value) as { updated_by: string }).updated_by)) r.cluster++;
      } else if (e.key.startsWith(`${prefix}/audit/`)) {
        expect(e.type, 'an audit entry deleted (no prune runs in this test)').toBe('put');
        const entry = AuditEntrySchema.parse(JSON.parse(e.value));
        const before = counts.get(entry.id);
        counts.set(entry.id, entry.count ?? 0);
        r.audit.push({ entry, created: before === undefined, grew: (entry.count ?? 0) - (before ?? 0) });
      }
    }

    const problems: string[] = [];
    const pairs = (entries: AtRevision['audit'], action: string): string[] =>
      entries.filter((a) => a.entry.action === action).map((a) => `${a.entry.kind}/${a.entry.target}`);
    const grown = (entries: AtRevision['audit'], action: string): number =>
      entries.filter((a) => a.entry.action === action).reduce((n, a) => n + a.grew, 0);
    const sorted = (xs: readonly string[]): string[] => [...xs].sort();
    let mutations = 0;
    for (const [revision, r] of byRevision) {
      const say = (what: string): number => problems.push(`revision ${revision}: ${what}`);
      mutations += r.parks.length + r.releases.length + r.resets.length + r.tasks.length + r.cluster;
      for (const a of r.audit) {
        if (!a.created && !a.entry.action.startsWith('cooldowns.')) say(`single entry ${a.entry.id} rewritten`);
        if (a.entry.action.startsWith('cooldowns.') && a.grew < 1) say(`bulk entry ${a.entry.id} put without growing`);
      }
      // Singles name exactly what committed with them; bulk entries grew by exactly the rest.
      const singleParks = pairs(r.audit, 'cooldown.park');
      if (singleParks.some((p) => !r.parks.includes(p))) say(`park entry without its park: ${singleParks.join(' ')}`);
      if (singleParks.length + grown(r.audit, 'cooldowns.park') !== r.parks.length) {
        say(
          `${r.parks.length} parks, ${singleParks.length} park entries + bulk growth ${grown(r.audit, 'cooldowns.park')}`,
        );
      }
      const singleResets = pairs(r.audit, 'cooldown.reset');
      if (singleResets.some((p) => !r.resets.includes(p)))
        say(`reset entry without its reset: ${singleResets.join(' ')}`);
      if (singleResets.length + grown(r.audit, 'cooldowns.reset') !== r.resets.length) {
        say(
          `${r.resets.length} resets, ${singleResets.length} entries + bulk growth ${grown(r.audit, 'cooldowns.reset')}`,
        );
      }
      if (sorted(pairs(r.audit, 'cooldown.release')).join() !== sorted(r.releases).join()) {
        say(`releases ${r.releases.join(' ')} against entries ${pairs(r.audit, 'cooldown.release').join(' ')}`);
      }
      const enqueued = r.audit.filter((a) => a.entry.action === 'task.enqueue').map((a) => a.entry.task_id ?? '');
      if (sorted(enqueued).join() !== sorted(r.tasks).join())
        say(`tasks ${r.tasks.join(' ')} against ${enqueued.join(' ')}`);
      if (r.audit.filter((a) => a.entry.action === 'cluster.update').length !== r.cluster)
        say('cluster change unaudited');
    }
    expect(problems).toEqual([]);

    // The victim's bulk: one entry, cut short, its count what its transactions committed.
    const entries = [
      ...new Map(changes.filter((e) => e.key.startsWith(`${prefix}/audit/`)).map((e) => [e.key, e])).values(),
    ].map((e) => AuditEntrySchema.parse(JSON.parse(e.value)));
    const killed = entries.filter((e) => e.master_id === victim.id && e.action === 'cooldowns.reset');
    expect(killed).toHaveLength(1);
    const cut = killed[0]!;
    const bigResets = changes.filter(
      (e) =>
        e.type === 'delete' &&
        e.key.startsWith(`${prefix}/cooldown/compact/`) &&
        targetFromHex(e.key.split('/').at(-1)!).startsWith('big-'),
    );
    expect(cut.count).toBe(bigResets.length);
    expect(cut.matched).toBe(BIG);
    expect(cut.count!).toBeLessThan(BIG);
    expect(cut.count!).toBeGreaterThan(0);

    // Who is a token's name, never a token: not in the trail, not anywhere under the prefix.
    expect(new Set(entries.map((e) => e.who))).toEqual(new Set(['ops-alice', 'ops-bob']));
    const everything = await kv.range(`${prefix}/`);
    for (const token of Object.values(TOKENS)) {
      expect(everything.kvs.filter((x) => x.value.includes(token)).map((x) => x.key)).toEqual([]);
      for (const m of masters) expect(m.output()).not.toContain(token);
    }
    // A surviving master serves the whole trail.
    const served: unknown[] = [];
    for (let cursor: string | null = null; ;) {
      const res = await apis[0]!.raw(`/audit?limit=200${cursor ? `&cursor=${cursor}` : ''}`, {
        headers: { authorization: `Bearer ${TOKENS['ops-alice']}` },
      });
      const body = JSON.parse(res.text) as { entries: unknown[]; next_cursor: string | null };
      served.push(...body.entries);
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    expect(served).toHaveLength(entries.length);

    const byAction: Record<string, number> = {};
    for (const e of entries) byAction[e.action] = (byAction[e.action] ?? 0) + 1;
    recordFigures('audit', {
      masters: MASTERS,
      requests: statuses.length + 1,
      contended_503: statuses.filter((x) => x === 503).length,
      committed_mutations: mutations,
      audit_entries: entries.length,
      by_action: byAction,
      killed_bulk: { matched: cut.matched, count: cut.count, killed_at_revision: killedAt },
      problems: problems.length,
    });
    await killer.close();
    await history.close();
    await kv.close();
  });
});
