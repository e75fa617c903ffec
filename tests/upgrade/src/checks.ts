/**
 * The scenario's invariants, judged on the ordered etcd log (docs/ARCHITECTURE.md §2.6, §2.7):
 * every record at the revision it was written, whichever version wrote it. Each check returns its
 * violations as sentences (empty when it holds) and the figures that show it was exercised.
 */
import { type TaskRecord, parsePairKey } from '@maintd/core';
import { type TaskChange, lifecycleViolations } from '@maintd/faults/harness/cluster-fixture';
import type { Change } from './etcd-log.js';

/** Which release a master incarnation ran. */
export type Release = 'N-1' | 'N';

const pairKey = (kind: string, target: string): string => `${kind} ${target}`;

/** `cooldown/<kind>/<hex>` or `parked/<kind>/<hex>` → its (kind, target). */
function pairOfKey(key: string): string {
  const pair = parsePairKey('cooldown/', key) ?? parsePairKey('parked/', key);
  return pair ? pairKey(pair.kind, pair.target) : key;
}

interface Held {
  readonly value: Record<string, unknown>;
  readonly seenAt: number;
  /** Release of the master whose failure opened it (cooldowns). */
  readonly by: Release | undefined;
}

/** What the replay found. */
export interface Replay {
  /** Each task's changes (test-injected writes left out), for the lifecycle checks. */
  readonly tasks: ReadonlyMap<string, TaskChange[]>;
  /** Failures that must have been counted, and were not (or were counted wrong). */
  readonly countViolations: string[];
  /** Sweep tasks created while a window or park of theirs was in force. */
  readonly gateViolations: string[];
  /** Failures counted, by the release of the master that finished the task. */
  readonly countedBy: Record<Release, number>;
  /** Windows opened (a cooldown written with `until_ms`), by the release that opened them. */
  readonly windowsBy: Record<Release, number>;
  /** Sweep runs of a kind while one of its windows was open, by `<opener> → <sweeper>`. */
  readonly gatedSweeps: Record<string, number>;
  /** Sweep runs of a kind while one of its parks was in force, by the sweeper's release. */
  readonly parkedSweeps: Record<Release, number>;
  /** The same, by kind. */
  readonly parkedSweepsOf: Record<string, number>;
  /** Sweep-created tasks checked against the windows and parks. */
  readonly sweepTasks: number;
  /** The latest cooldown record per `<kind> <target>`. */
  readonly cooldowns: ReadonlyMap<string, Record<string, unknown>>;
  /**
   * Holds (a task record turned `held`, or a `held/` key written) while an N-1 master was
   * registered, or before the cluster record had {@link HELD_TASKS} on: N-1 cannot read the
   * state, so N may hold nothing while one lives (docs/ARCHITECTURE.md §2.7, §2.8).
   */
  readonly heldViolations: string[];
  /** Holds seen (task records turned `held`). */
  readonly holds: number;
}

/** The cluster feature under which N holds the automatic tasks of parked pairs. */
export const HELD_TASKS = 'held_tasks';

/** How long after a window or park is written a sweep may still miss it (read, then enqueue). */
export const GATE_GRACE_MS = 2000;

/**
 * Replays the log. `releaseOf` names the release of a master id; `jobKind` the kind of a sweep
 * job (`merge-wal-sweep` → `merge_wal`); `injected` the revisions the test itself wrote.
 */
export function replay(
  changes: readonly Change[],
  releaseOf: (masterId: string) => Release | undefined,
  jobKind: (job: string) => string | undefined,
  injected: ReadonlySet<number>,
): Replay {
  const tasks = new Map<string, TaskChange[]>();
  const cooldowns = new Map<string, Held>();
  const parks = new Map<string, Held>();
  const failedSinceSuccess = new Map<string, number>();
  const countViolations: string[] = [];
  const gateViolations: string[] = [];
  const countedBy: Record<Release, number> = { 'N-1': 0, N: 0 };
  const windowsBy: Record<Release, number> = { 'N-1': 0, N: 0 };
  const gatedSweeps: Record<string, number> = {};
  const parkedSweeps: Record<Release, number> = { 'N-1': 0, N: 0 };
  const parkedSweepsOf: Record<string, number> = {};
  let sweepTasks = 0;
  /** Who ran each sweep job last (sweep marks). */
  const sweeper = new Map<string, string>();
  const heldViolations: string[] = [];
  let holds = 0;
  /** The registrations at this revision (`masters/<id>`: present exactly while its session is). */
  const registered = new Set<string>();
  /** The features the cluster record has switched on at this revision. */
  let enabled: readonly string[] = [];

  for (let i = 0; i < changes.length;) {
    const revision = changes[i]!.revision;
    let j = i;
    while (j < changes.length && changes[j]!.revision === revision) j++;
    const group = changes.slice(i, j);
    i = j;
    const own = injected.has(revision);
    /** Pairs whose counted failure or success this revision holds, with who finished it. */
    const failedNow = new Map<string, Release | undefined>();
    const succeededNow = new Set<string>();

    // Registrations and the feature gates first: no transaction writes them with a hold.
    for (const c of group) {
      if (c.key.startsWith('masters/')) {
        const id = c.key.slice('masters/'.length);
        if (c.value) registered.add(id);
        else registered.delete(id);
      } else if (c.key === 'cluster' && c.value) {
        const features = Array.isArray(c.value.features) ? (c.value.features as { name?: unknown }[]) : [];
        enabled = features.flatMap((f) => (typeof f.name === 'string' ? [f.name] : []));
      }
    }
    /** Judges one hold written at this revision. */
    const held = (what: string): void => {
      // A master of an unknown release (one the test started only to see it refused) is left out:
      // it stops before its first claim, and so misreads nothing.
      const olds = [...registered].filter((m) => releaseOf(m) === 'N-1').sort();
      if (olds.length > 0) heldViolations.push(`@${revision} ${what} while N-1 masters ${olds.join(', ')} live`);
      if (!enabled.includes(HELD_TASKS)) heldViolations.push(`@${revision} ${what} before ${HELD_TASKS} was on`);
    };
    for (const c of group.filter((x) => x.key.startsWith('held/') && x.value)) held(`held key ${c.key}`);

    for (const c of group.filter((x) => x.key.startsWith('tasks/'))) {
      const id = c.key.slice('tasks/'.length);
      const list = tasks.get(id) ?? [];
      const prev = list.at(-1)?.record;
      const record = c.value as TaskRecord | undefined;
      if (!own) list.push({ revision, seenAt: c.seenAt, record });
      tasks.set(id, list);
      if (!record || own) continue;
      const pair = pairKey(record.kind, record.target);
      if (record.state === 'held' && prev?.state !== 'held') {
        holds++;
        held(`${id} (${pair}) held`);
      }
      if (!prev && record.source === 'sweep') {
        sweepTasks++;
        const window = cooldowns.get(pair);
        const until = window?.value.until_ms as number | null | undefined;
        if (
          window &&
          typeof until === 'number' &&
          record.enqueued_at < until &&
          window.seenAt < c.seenAt - GATE_GRACE_MS
        )
          gateViolations.push(
            `${id}: sweep task of ${pair} enqueued at ${record.enqueued_at}, inside the window to ${until} opened by ${window.by ?? '?'}`,
          );
        const park = parks.get(pair);
        const parkUntil = park?.value.until_ms as number | null | undefined;
        if (
          park &&
          (parkUntil === null || record.enqueued_at < (parkUntil ?? 0)) &&
          park.seenAt < c.seenAt - GATE_GRACE_MS
        )
          gateViolations.push(`${id}: sweep task of ${pair} enqueued at ${record.enqueued_at} while parked`);
      }
      if (prev?.state === 'running' && record.state === 'failed' && record.error_class === 'target') {
        failedSinceSuccess.set(pair, (failedSinceSuccess.get(pair) ?? 0) + 1);
        const by = prev.owner ? releaseOf(prev.owner) : undefined;
        failedNow.set(pair, by);
        if (by) countedBy[by]++;
      } else if (prev?.state !== 'done' && record.state === 'done') {
        failedSinceSuccess.set(pair, 0);
        succeededNow.add(pair);
      }
    }

    const cooldownWrites = new Set<string>();
    for (const c of group.filter((x) => x.key.startsWith('cooldown/'))) {
      const pair = pairOfKey(c.key);
      cooldownWrites.add(pair);
      if (!c.value) {
        cooldowns.delete(pair);
        continue;
      }
      const expected = failedSinceSuccess.get(pair) ?? 0;
      if (c.value.failures !== expected)
        countViolations.push(
          `@${revision} ${pair}: cooldown says ${String(c.value.failures)} failures, the tasks ${expected}`,
        );
      const opener = failedNow.get(pair);
      const before = cooldowns.get(pair)?.value.until_ms;
      if (typeof c.value.until_ms === 'number' && c.value.until_ms !== before && opener) windowsBy[opener]++;
      cooldowns.set(pair, { value: c.value, seenAt: c.seenAt, by: opener ?? cooldowns.get(pair)?.by });
    }
    for (const [pair] of failedNow) {
      if (!cooldownWrites.has(pair)) countViolations.push(`@${revision} ${pair}: a failure finished without its count`);
    }
    for (const pair of succeededNow) {
      if (cooldowns.has(pair)) countViolations.push(`@${revision} ${pair}: a success left the failure count in place`);
    }

    for (const c of group.filter((x) => x.key.startsWith('parked/'))) {
      const pair = pairOfKey(c.key);
      if (c.value) parks.set(pair, { value: c.value, seenAt: c.seenAt, by: undefined });
      else parks.delete(pair);
    }

    for (const c of group.filter((x) => x.key.startsWith('sweeps/') && x.value)) {
      const job = c.key.slice('sweeps/'.length);
      const master = String(c.value!.master_id);
      if (sweeper.get(job) === `${master}@${String(c.value!.slot)}`) continue;
      sweeper.set(job, `${master}@${String(c.value!.slot)}`);
      const kind = jobKind(job);
      const by = releaseOf(master);
      if (!kind || !by) continue;
      const now = c.seenAt;
      for (const [pair, w] of cooldowns) {
        const until = w.value.until_ms;
        if (!pair.startsWith(`${kind} `) || typeof until !== 'number' || until <= now || !w.by) continue;
        const k = `${w.by} → ${by}`;
        gatedSweeps[k] = (gatedSweeps[k] ?? 0) + 1;
      }
      for (const [pair, p] of parks) {
        const until = p.value.until_ms;
        if (pair.startsWith(`${kind} `) && (until === null || (typeof until === 'number' && until > now))) {
          parkedSweeps[by]++;
          parkedSweepsOf[kind] = (parkedSweepsOf[kind] ?? 0) + 1;
        }
      }
    }
  }
  return {
    tasks,
    countViolations,
    gateViolations,
    countedBy,
    windowsBy,
    gatedSweeps,
    parkedSweeps,
    parkedSweepsOf,
    sweepTasks,
    cooldowns: new Map([...cooldowns].map(([k, v]) => [k, v.value])),
    heldViolations,
    holds,
  };
}

/** What the lifecycle and ownership checks found over every task. */
export interface TaskFindings {
  readonly lifecycle: string[];
  /** Tasks claimed more than once (no master is killed here: a second claim is a second run). */
  readonly claimedTwice: string[];
  /** Claims of a kind by a master whose release does not run it. */
  readonly foreignClaims: string[];
  /** Claims per `<kind> <target>`. */
  readonly claims: ReadonlyMap<string, number>;
  /** Claims by release and kind, `<release> <kind>`. */
  readonly claimsBy: Record<string, number>;
}

/** Judges each task's recorded life; `runs(release, kind)` says whether a release runs a kind. */
export function judgeTasks(
  tasks: ReadonlyMap<string, TaskChange[]>,
  releaseOf: (masterId: string) => Release | undefined,
  runs: (release: Release, kind: string) => boolean,
): TaskFindings {
  const lifecycle: string[] = [];
  const claimedTwice: string[] = [];
  const foreignClaims: string[] = [];
  const claims = new Map<string, number>();
  const claimsBy: Record<string, number> = {};
  for (const [id, changes] of tasks) {
    lifecycle.push(...lifecycleViolations(id, changes));
    let n = 0;
    for (let k = 1; k < changes.length; k++) {
      const prev = changes[k - 1]!.record;
      const r = changes[k]!.record;
      if (prev?.state !== 'queued' || r?.state !== 'running') continue;
      n++;
      const pair = pairKey(r.kind, r.target);
      claims.set(pair, (claims.get(pair) ?? 0) + 1);
      const release = r.owner ? releaseOf(r.owner) : undefined;
      const by = `${release ?? `unknown master ${r.owner ?? ''}`} ${r.kind}`;
      claimsBy[by] = (claimsBy[by] ?? 0) + 1;
      if (release && !runs(release, r.kind))
        foreignClaims.push(`${id}: ${r.kind} claimed by ${r.owner ?? '?'} (${release})`);
    }
    if (n > 1) claimedTwice.push(`${id}: claimed ${n} times`);
  }
  return { lifecycle, claimedTwice, foreignClaims, claims, claimsBy };
}

/**
 * Worker calls against claims: a run of `merge_wal` asks every worker once, a run of the extra
 * kind the first worker once. More calls than that is a run no claim accounts for (a task run
 * twice, or by a master that never claimed it); fewer, a claim that never reached the workers.
 */
export function judgeWorkerCalls(
  calls: ReadonlyMap<string, number>,
  claims: ReadonlyMap<string, number>,
  callsPerRun: Readonly<Record<string, { route: string; calls: number }>>,
): string[] {
  const out: string[] = [];
  const pairs = new Set(claims.keys());
  for (const key of calls.keys()) {
    const [route, target] = key.split(' ');
    const kind = Object.entries(callsPerRun).find(([, v]) => v.route === route)?.[0];
    pairs.add(pairKey(kind ?? `route:${route ?? ''}`, target ?? ''));
  }
  for (const pair of pairs) {
    const [kind, target] = pair.split(' ');
    const spec = callsPerRun[kind ?? ''];
    if (!spec) {
      out.push(`${pair}: calls or claims of a kind this check does not count`);
      continue;
    }
    const expected = (claims.get(pair) ?? 0) * spec.calls;
    const got = calls.get(`${spec.route} ${target ?? ''}`) ?? 0;
    if (got !== expected)
      out.push(`${pair}: ${got} worker calls for ${claims.get(pair) ?? 0} claims (${spec.calls} per run)`);
  }
  return out;
}
