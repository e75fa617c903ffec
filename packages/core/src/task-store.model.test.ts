/**
 * A model-based test of the TaskStore (docs/ARCHITECTURE.md §2.6–2.7): random sequences of enqueue, claim,
 * finish, session loss, restart, recovery, cooldown reset, clock steps and reads are run
 * against several store instances sharing one Kv, and against a pure reference model of the
 * queue, claims, target locks, dedupe, history and cooldown counts. Every command checks its
 * result against the model; each run ends with a full comparison of every task and cooldown.
 *
 * Only the public API (`./index.js`, `./testing/index.js`) is used, so the test holds whatever
 * the store's internals look like.
 */
import { randomUUID } from 'node:crypto';
import {
  type Arbitrary,
  type AsyncCommand,
  assert,
  asyncModelRun,
  asyncProperty,
  commands,
  constant,
  constantFrom,
  integer,
  nat,
  oneof,
  option,
  record,
  subarray,
  tuple,
} from 'fast-check';
import { describe, expect, inject, it } from 'vitest';
import {
  type Claim,
  ClaimLostError,
  type ErrorClass,
  type TaskCooldown,
  type TaskKind,
  type TaskOutcome,
  type TaskRecord,
  type TaskSource,
  type TaskState,
  TaskStore,
  seededRandom,
} from './index.js';
import { MANUAL_STREAK } from './store/claimer.js';
import { type KvHarness, etcdHarness, memoryHarness } from './testing/index.js';

// ------------------------------------------------------------------------------ configuration

/** Store instances (masters) sharing one Kv. */
const SLOTS = 3;
/** Few targets, so that dedupe, target locks and cooldown counts collide often. */
const TARGETS = ['s0', 'store.1-x'] as const;
/** The kinds the model runs: core names none, so the model picks the shipped registry's three. */
const TASK_KINDS = ['merge_wal', 'compact', 'index_id'] as const;
const LEASE_TTL_SECS = 10;
/** A task orphaned with more claims than this is failed by recovery instead of requeued. */
const MAX_ATTEMPTS = 2;
/** A small explicit policy: windows from the 2nd consecutive target failure, 60 s doubling up to 10 min. */
const POLICY = {
  afterFailures: 2,
  baseSecs: 60,
  maxSecs: 600,
  jitter: 0,
  kinds: TASK_KINDS,
  maxPercent: 100,
  countInfrastructure: false,
} as const;
/** Bounds a run: tasks created, and logical time elapsed. */
const MAX_TASKS = 80;
const MAX_ELAPSED_MS = 2 * 3_600_000;
/** Fixed, so a failure reproduces; fast-check prints it (with the shrunk path) on failure. */
const SEED = 20_260_101;

// ------------------------------------------------------------------------------ the model

/** Who holds a claim: a slot, during one of its sessions (a lost session or restart bumps the epoch). */
interface Holder {
  readonly slot: number;
  readonly epoch: number;
}

/** A claim handed to a caller and not yet passed to `finish`. */
interface HeldClaim {
  readonly key: number;
  readonly taskId: string;
  readonly holder: Holder;
}

interface ModelCooldown {
  readonly record: TaskCooldown;
  /** When its lease (TTL = the policy max) runs out on the clock. */
  readonly expiresAt: number;
}

interface Model {
  /** MemoryKv: leases (sessions, cooldown records) expire on the FakeClock; etcd: on real time. */
  readonly leasesOnClock: boolean;
  readonly startedAt: number;
  now: number;
  /** Every task the store should hold, as it should read back. */
  readonly tasks: Map<string, TaskRecord>;
  /** Running task id → the claim that started it (alive or not). */
  readonly holders: Map<string, Holder>;
  claims: HeldClaim[];
  readonly slots: { epoch: number; masterId: string; manualStreak: number }[];
  /** `kind/target` → cooldown record. */
  readonly cooldowns: Map<string, ModelCooldown>;
  nextKey: number;
  failuresCounted: number;
}

interface Real {
  readonly h: KvHarness;
  readonly prefix: string;
  /** The live store of each slot. */
  readonly stores: TaskStore[];
  /** Every store opened, for teardown. */
  readonly opened: TaskStore[];
  /** Claims by their model key, with the instance that made them. */
  readonly claims: Map<number, { readonly store: TaskStore; readonly claim: Claim }>;
}

const cooldownKey = (kind: TaskKind, target: string): string => `${kind}/${target}`;
const byId = (a: TaskRecord, b: TaskRecord): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const isActive = (s: TaskState): boolean => s === 'queued' || s === 'running';
const ORPHANED = '<orphaned>';

function slotOf(m: Model, slot: number): { epoch: number; masterId: string; manualStreak: number } {
  const s = m.slots[slot];
  if (!s) throw new Error(`no slot ${slot}`);
  return s;
}

function taskOf(m: Model, id: string): TaskRecord {
  const t = m.tasks.get(id);
  if (!t) throw new Error(`model has no task ${id}`);
  return t;
}

function alive(m: Model, holder: Holder): boolean {
  return slotOf(m, holder.slot).epoch === holder.epoch;
}

/** Targets whose lock is held: a running task under a live session (a dead session's lock died with it). */
function lockedTargets(m: Model): Set<string> {
  const out = new Set<string>();
  for (const [id, holder] of m.holders) if (alive(m, holder)) out.add(taskOf(m, id).target);
  return out;
}

/** The active (queued or running) task of (kind, target) that an enqueue dedupes to. */
function activeTask(m: Model, kind: TaskKind, target: string): TaskRecord | undefined {
  return [...m.tasks.values()].find((t) => t.kind === kind && t.target === target && isActive(t.state));
}

/**
 * The task a claim takes among the queued tasks of the kinds whose target is not locked: the
 * oldest manual one (ids order = enqueue order), else the oldest; after MANUAL_STREAK manual claims
 * in a row by the slot's store, the oldest of any source.
 */
function nextClaimable(m: Model, kinds: readonly TaskKind[], streak: number): TaskRecord | undefined {
  const locked = lockedTargets(m);
  const claimable = [...m.tasks.values()]
    .filter((t) => t.state === 'queued' && kinds.includes(t.kind) && !locked.has(t.target))
    .sort(byId);
  const manual = streak < MANUAL_STREAK ? claimable.find((t) => t.source === 'manual') : undefined;
  return manual ?? claimable[0];
}

/** Running tasks without a live claim, in id order, requeued in place or failed past MAX_ATTEMPTS. */
function recoverInModel(m: Model): { requeued: string[]; failed: string[] } {
  const requeued: string[] = [];
  const failed: string[] = [];
  const orphans = [...m.holders].filter(([, h]) => !alive(m, h)).map(([id]) => taskOf(m, id));
  for (const t of orphans.sort(byId)) {
    const { started_at: _s, owner: _o, ...rest } = t;
    m.holders.delete(t.id);
    if (t.attempt > MAX_ATTEMPTS) {
      m.tasks.set(t.id, {
        ...rest,
        state: 'failed',
        finished_at: m.now,
        error: ORPHANED,
        error_class: 'infrastructure',
      });
      failed.push(t.id);
    } else {
      m.tasks.set(t.id, { ...rest, state: 'queued' });
      requeued.push(t.id);
    }
  }
  return { requeued, failed };
}

function advanceModel(m: Model, ms: number): void {
  m.now += ms;
  if (!m.leasesOnClock) return;
  for (const [k, c] of m.cooldowns) if (c.expiresAt <= m.now) m.cooldowns.delete(k);
}

/** The window at `failures` consecutive failures under POLICY (jitter 0): none below the threshold. */
function windowMs(failures: number): number {
  if (failures < POLICY.afterFailures) return 0;
  return Math.min(POLICY.baseSecs * 2 ** (failures - POLICY.afterFailures), POLICY.maxSecs) * 1000;
}

/** A failure of `task` counted: the next record, written by `finish` before it resolves. */
function countFailure(m: Model, task: TaskRecord, error: string): { record: TaskCooldown; windowMs: number } {
  const key = cooldownKey(task.kind, task.target);
  const prev = m.cooldowns.get(key)?.record;
  const failures = (prev?.failures ?? 0) + 1;
  const w = windowMs(failures);
  const rec: TaskCooldown = {
    kind: task.kind,
    target: task.target,
    failures,
    until_ms: w > 0 ? m.now + w : null,
    last_error: error,
    last_error_class: 'target',
    first_failure_ms: prev?.first_failure_ms ?? m.now,
    last_failure_ms: m.now,
    last_task_id: task.id,
  };
  m.cooldowns.set(key, { record: rec, expiresAt: m.now + POLICY.maxSecs * 1000 });
  m.failuresCounted++;
  return { record: rec, windowMs: w };
}

/** Cooldown records in the store's listing order (kind, then target), optionally only active windows. */
function modelCooldowns(m: Model, options: { kind?: TaskKind; activeOnly?: boolean } = {}): TaskCooldown[] {
  return [...m.cooldowns.values()]
    .map((c) => c.record)
    .filter((c) => options.kind === undefined || c.kind === options.kind)
    .filter((c) => !options.activeOnly || (c.until_ms !== null && c.until_ms > m.now))
    .sort((a, b) => (a.kind !== b.kind ? (a.kind < b.kind ? -1 : 1) : a.target < b.target ? -1 : 1));
}

/** What a model record must read back as (recovery's give-up message is matched, not spelled out). */
function expected(t: TaskRecord): TaskRecord {
  if (t.error !== ORPHANED) return t;
  return { ...t, error: expect.stringContaining(`orphaned ${t.attempt} times`) as string };
}

function expectedTasks(m: Model, filter: (t: TaskRecord) => boolean = () => true): TaskRecord[] {
  return [...m.tasks.values()].filter(filter).sort(byId).reverse().map(expected);
}

function storeOf(r: Real, slot: number): TaskStore {
  const s = r.stores[slot];
  if (!s) throw new Error(`no store in slot ${slot}`);
  return s;
}

/** Reads everything the model tracks through `store` and compares it. */
async function compareAll(m: Model, store: TaskStore): Promise<void> {
  const page = await store.listTasks({ limit: 1000 });
  expect(page.total).toBe(m.tasks.size);
  expect(page.nextCursor).toBeNull();
  expect(page.tasks).toEqual(expectedTasks(m));
  for (const kind of TASK_KINDS) {
    const queued = [...m.tasks.values()].filter((t) => t.kind === kind && t.state === 'queued').length;
    expect(await store.queueDepth(kind)).toBe(queued);
    const active = [...m.tasks.values()].filter((t) => t.kind === kind && isActive(t.state)).map((t) => t.target);
    expect(await store.activeTargets(kind)).toEqual(new Set(active));
    expect(await store.coolingTargets(kind)).toEqual(
      new Set(modelCooldowns(m, { kind, activeOnly: true }).map((c) => c.target)),
    );
  }
  expect(await store.queueDepth()).toBe([...m.tasks.values()].filter((t) => t.state === 'queued').length);
  expect(await store.listCooldowns({ all: true })).toEqual(modelCooldowns(m));
  expect(await store.listCooldowns()).toEqual(modelCooldowns(m, { activeOnly: true }));
}

// ------------------------------------------------------------------------------ commands

type Cmd = AsyncCommand<Model, Real>;

class Enqueue implements Cmd {
  constructor(
    readonly slot: number,
    readonly kind: TaskKind,
    readonly target: string,
    readonly source: TaskSource | null,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.tasks.size < MAX_TASKS;
  }
  async run(m: Model, r: Real): Promise<void> {
    const res = await storeOf(r, this.slot).enqueue(this.kind, this.target, this.source ? { source: this.source } : {});
    const active = activeTask(m, this.kind, this.target);
    if (active) {
      // A dedupe hit returns the active task as it is, whatever its source, never a new one.
      expect(res).toEqual({ task: expected(active), created: false });
      return;
    }
    // Never gated by cooldown: created even while (kind, target) is cooling.
    expect(res.created).toBe(true);
    expect(m.tasks.has(res.task.id)).toBe(false);
    const task: TaskRecord = {
      id: res.task.id,
      kind: this.kind,
      target: this.target,
      state: 'queued',
      source: this.source ?? 'manual',
      enqueued_at: m.now,
      attempt: 0,
    };
    expect(res.task).toEqual(task);
    m.tasks.set(task.id, task);
  }
  toString(): string {
    return `enqueue(m${this.slot}, ${this.kind}, ${this.target}, ${this.source ?? 'default'})`;
  }
}

class ClaimNext implements Cmd {
  constructor(
    readonly slot: number,
    readonly kinds: readonly TaskKind[],
  ) {}
  check(m: Readonly<Model>): boolean {
    // Something of these kinds is queued: either it is claimed, or every candidate's target is locked.
    return [...m.tasks.values()].some((t) => t.state === 'queued' && this.kinds.includes(t.kind));
  }
  async run(m: Model, r: Real): Promise<void> {
    const store = storeOf(r, this.slot);
    const slot = slotOf(m, this.slot);
    const want = nextClaimable(m, this.kinds, slot.manualStreak);
    const claim = await store.claimNext(this.kinds);
    if (!want) {
      expect(claim).toBeUndefined();
      return;
    }
    slot.manualStreak = want.source === 'manual' ? slot.manualStreak + 1 : 0;
    const running: TaskRecord = {
      ...want,
      state: 'running',
      started_at: m.now,
      attempt: want.attempt + 1,
      owner: slot.masterId,
    };
    expect(claim?.task).toEqual(running);
    if (!claim) return;
    const holder = { slot: this.slot, epoch: slot.epoch };
    const key = m.nextKey++;
    m.tasks.set(running.id, running);
    m.holders.set(running.id, holder);
    m.claims.push({ key, taskId: running.id, holder });
    r.claims.set(key, { store, claim });
  }
  toString(): string {
    return `claimNext(m${this.slot}, [${this.kinds.join(',')}])`;
  }
}

type OutcomeSpec = 'ok' | ErrorClass;

class Finish implements Cmd {
  constructor(
    readonly pick: number,
    readonly outcome: OutcomeSpec,
  ) {}
  check(m: Readonly<Model>): boolean {
    const held = m.claims[this.pick % Math.max(1, m.claims.length)];
    return held !== undefined;
  }
  async run(m: Model, r: Real): Promise<void> {
    const held = m.claims[this.pick % m.claims.length];
    const real = held ? r.claims.get(held.key) : undefined;
    if (!held || !real) throw new Error('no claim to finish');
    m.claims = m.claims.filter((c) => c !== held);
    r.claims.delete(held.key);
    const { store, claim } = real;
    const text = `${this.outcome === 'ok' ? 'ok' : 'err'}-${held.key}`;
    const outcome: TaskOutcome =
      this.outcome === 'ok' ? { ok: true, detail: text } : { ok: false, error: text, errorClass: this.outcome };
    const task = claim.task;
    const ck = cooldownKey(task.kind, task.target);

    if (!alive(m, held.holder)) {
      // The session that held the claim is gone: the late result is discarded, cooldown included.
      await expect(store.finish(claim, outcome)).rejects.toBeInstanceOf(ClaimLostError);
      expect(await store.getTask(task.id)).toEqual(expected(taskOf(m, task.id)));
      expect(await store.getCooldown(task.kind, task.target)).toEqual(m.cooldowns.get(ck)?.record);
      return;
    }

    const { owner: _owner, ...rest } = taskOf(m, task.id);
    const result = await store.finish(claim, outcome);
    m.holders.delete(task.id);
    if (outcome.ok) {
      const done: TaskRecord = { ...rest, state: 'done', finished_at: m.now, detail: text };
      expect(result.task).toEqual(done);
      // A success clears the count, whatever its source.
      expect(result.cooldown).toEqual({ type: 'cleared', existed: m.cooldowns.has(ck) });
      m.tasks.set(task.id, done);
      m.cooldowns.delete(ck);
    } else {
      const failed: TaskRecord = {
        ...rest,
        state: 'failed',
        finished_at: m.now,
        error: text,
        error_class: outcome.errorClass,
      };
      expect(result.task).toEqual(failed);
      m.tasks.set(task.id, failed);
      if (outcome.errorClass === 'target') {
        const { record: rec, windowMs: w } = countFailure(m, failed, text);
        expect(result.cooldown).toMatchObject({
          type: 'failure',
          result: { action: 'write', record: rec, cooling: w > 0, guardOverflow: false, windowMs: w },
        });
      } else {
        // Infrastructure failures neither count nor reset the count.
        expect(result.cooldown).toEqual({ type: 'failure', result: { action: 'ignore', reason: 'class' } });
      }
    }
    expect(await store.getTask(task.id)).toEqual(taskOf(m, task.id));
    expect(await store.getCooldown(task.kind, task.target)).toEqual(m.cooldowns.get(ck)?.record);
  }
  toString(): string {
    return `finish(claim#${this.pick}, ${this.outcome})`;
  }
}

class RecoverOrphaned implements Cmd {
  constructor(readonly slot: number) {}
  check(m: Readonly<Model>): boolean {
    return m.holders.size > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const want = recoverInModel(m);
    expect(await storeOf(r, this.slot).recoverOrphaned()).toEqual(want);
  }
  toString(): string {
    return `recoverOrphaned(m${this.slot})`;
  }
}

class LoseSession implements Cmd {
  constructor(
    readonly pick: number,
    readonly how: 'expire' | 'revoke',
  ) {}
  /** The slot holding the picked live claim: that claim must die with its session. */
  #slot(m: Readonly<Model>): number | undefined {
    const live = m.claims.filter((c) => alive(m, c.holder));
    return live[this.pick % Math.max(1, live.length)]?.holder.slot;
  }
  check(m: Readonly<Model>): boolean {
    return this.#slot(m) !== undefined;
  }
  async run(m: Model, r: Real): Promise<void> {
    const slot = this.#slot(m);
    if (slot === undefined) throw new Error('no live claim');
    const session = storeOf(r, slot).session;
    const lease = session.lease;
    expect(lease).toBeDefined();
    if (!lease) return;
    if (this.how === 'expire') {
      // The master stalls: its keepalives stop and the lease runs out on the clock.
      lease.release();
      const ms = LEASE_TTL_SECS * 1000;
      await r.h.clock.advance(ms);
      advanceModel(m, ms);
      expect(lease.lost.aborted).toBe(true);
    } else {
      await lease.revoke();
      session.markLost(lease.id);
    }
    const renewed = await session.ready();
    expect(renewed.id).not.toBe(lease.id);
    slotOf(m, slot).epoch++;
  }
  toString(): string {
    return `loseSession(holder of live claim#${this.pick}, ${this.how})`;
  }
}

class Restart implements Cmd {
  constructor(readonly slot: number) {}
  check(m: Readonly<Model>): boolean {
    // It drops its own claims, and its start-up recovery picks up everyone's orphans.
    return m.holders.size > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    await storeOf(r, this.slot).close();
    const slot = slotOf(m, this.slot);
    slot.epoch++;
    slot.masterId = `master-${this.slot}-${slot.epoch}`;
    // A new store: its claimer starts without a streak.
    slot.manualStreak = 0;
    const want = recoverInModel(m);
    const store = await openStore(r, this.slot, slot.masterId, slot.epoch);
    r.stores[this.slot] = store;
    for (const id of [...want.requeued, ...want.failed]) {
      expect(await store.getTask(id)).toEqual(expected(taskOf(m, id)));
    }
  }
  toString(): string {
    return `restart(m${this.slot})`;
  }
}

class ClearCooldown implements Cmd {
  constructor(
    readonly slot: number,
    readonly kind: TaskKind,
    readonly target: string,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.failuresCounted > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const store = storeOf(r, this.slot);
    const key = cooldownKey(this.kind, this.target);
    expect(await store.clearCooldown(this.kind, this.target)).toBe(m.cooldowns.has(key));
    m.cooldowns.delete(key);
    expect(await store.getCooldown(this.kind, this.target)).toBeUndefined();
  }
  toString(): string {
    return `clearCooldown(m${this.slot}, ${this.kind}, ${this.target})`;
  }
}

class AdvanceClock implements Cmd {
  constructor(readonly ms: number) {}
  check(m: Readonly<Model>): boolean {
    return m.now + this.ms - m.startedAt <= MAX_ELAPSED_MS;
  }
  async run(m: Model, r: Real): Promise<void> {
    await r.h.clock.advance(this.ms);
    advanceModel(m, this.ms);
    expect(r.h.clock.now()).toBe(m.now);
  }
  toString(): string {
    return `advanceClock(${this.ms} ms)`;
  }
}

interface TaskFilter {
  readonly state: TaskState | null;
  readonly kind: TaskKind | null;
  readonly target: string | null;
}

class ListTasks implements Cmd {
  constructor(
    readonly slot: number,
    readonly filter: TaskFilter,
    readonly pageSize: number,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.tasks.size > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const store = storeOf(r, this.slot);
    const { state, kind, target } = this.filter;
    const query = {
      ...(state ? { state } : {}),
      ...(kind ? { kind } : {}),
      ...(target ? { target } : {}),
    };
    const want = expectedTasks(
      m,
      (t) => (!state || t.state === state) && (!kind || t.kind === kind) && (!target || t.target === target),
    );
    const seen: TaskRecord[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages <= MAX_TASKS; pages++) {
      const page = await store.listTasks({ ...query, limit: this.pageSize, ...(cursor ? { cursor } : {}) });
      expect(page.total).toBe(want.length);
      expect(page.tasks.length).toBeLessThanOrEqual(this.pageSize);
      seen.push(...page.tasks);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(want);
    await compareAll(m, store);
  }
  toString(): string {
    const f = this.filter;
    return `listTasks(m${this.slot}, state=${f.state ?? '*'}, kind=${f.kind ?? '*'}, target=${f.target ?? '*'}, limit=${this.pageSize})`;
  }
}

class ListCooldowns implements Cmd {
  constructor(
    readonly slot: number,
    readonly kind: TaskKind | null,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.failuresCounted > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const store = storeOf(r, this.slot);
    const kind = this.kind ?? undefined;
    const opts = kind ? { kind } : {};
    expect(await store.listCooldowns({ ...opts, all: true })).toEqual(modelCooldowns(m, opts));
    expect(await store.listCooldowns(opts)).toEqual(modelCooldowns(m, { ...opts, activeOnly: true }));
    for (const k of kind ? [kind] : TASK_KINDS) {
      for (const target of TARGETS) {
        expect(await store.getCooldown(k, target)).toEqual(m.cooldowns.get(cooldownKey(k, target))?.record);
      }
    }
  }
  toString(): string {
    return `listCooldowns(m${this.slot}, kind=${this.kind ?? '*'})`;
  }
}

class GetTask implements Cmd {
  constructor(
    readonly slot: number,
    readonly pick: number,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.tasks.size > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const ids = [...m.tasks.keys()].sort();
    const id = ids[this.pick % ids.length];
    if (!id) throw new Error('no task to get');
    expect(await storeOf(r, this.slot).getTask(id)).toEqual(expected(taskOf(m, id)));
  }
  toString(): string {
    return `getTask(m${this.slot}, task#${this.pick})`;
  }
}

function commandArbs(leasesOnClock: boolean): Arbitrary<Cmd>[] {
  const slot = integer({ min: 0, max: SLOTS - 1 });
  // Skewed towards one (kind, target), so that consecutive failures pile up past the threshold.
  const kind = oneof(
    { weight: 2, arbitrary: constant(TASK_KINDS[0]) },
    { weight: 2, arbitrary: constantFrom(...TASK_KINDS) },
  );
  const target = oneof(
    { weight: 2, arbitrary: constant(TARGETS[0]) },
    { weight: 2, arbitrary: constantFrom(...TARGETS) },
  );
  const enqueue = tuple(slot, kind, target, option(constantFrom<TaskSource>('sweep', 'manual'))).map(
    ([s, k, t, src]) => new Enqueue(s, k, t, src),
  );
  const kinds = oneof(
    { weight: 2, arbitrary: constant([...TASK_KINDS]) },
    { weight: 1, arbitrary: subarray([...TASK_KINDS], { minLength: 1 }) },
  );
  const claim = tuple(slot, kinds).map(([s, ks]) => new ClaimNext(s, ks));
  // Target failures weigh triple, so counts reach the threshold and windows double.
  const finish = tuple(nat(), constantFrom<OutcomeSpec>('ok', 'target', 'target', 'target', 'infrastructure')).map(
    ([p, o]) => new Finish(p, o),
  );
  const filter = record({
    state: option(constantFrom<TaskState>('queued', 'running', 'done', 'failed')),
    kind: option(kind),
    target: option(target),
  });
  return [
    enqueue,
    enqueue,
    enqueue,
    enqueue,
    claim,
    claim,
    claim,
    claim,
    finish,
    finish,
    finish,
    finish,
    finish,
    slot.map((s) => new RecoverOrphaned(s)),
    tuple(nat(), leasesOnClock ? constantFrom('expire' as const, 'revoke' as const) : constant('revoke' as const)).map(
      ([p, how]) => new LoseSession(p, how),
    ),
    slot.map((s) => new Restart(s)),
    tuple(slot, constantFrom(...TASK_KINDS), constantFrom(...TARGETS)).map(([s, k, t]) => new ClearCooldown(s, k, t)),
    // Steps around the 60 s base window and the doubled ones, and past the 10 min record lease.
    constantFrom(1_000, 30_000, 61_000, 130_000, 700_000).map((ms) => new AdvanceClock(ms)),
    tuple(slot, filter, integer({ min: 1, max: 4 })).map(([s, f, n]) => new ListTasks(s, f, n)),
    tuple(slot, option(kind)).map(([s, k]) => new ListCooldowns(s, k)),
    tuple(slot, nat()).map(([s, p]) => new GetTask(s, p)),
  ];
}

// ------------------------------------------------------------------------------ the real system

async function openStore(r: Real, slot: number, masterId: string, epoch: number): Promise<TaskStore> {
  const store = await TaskStore.open({
    kv: await r.h.connect(),
    prefix: r.prefix,
    clock: r.h.clock,
    random: seededRandom(1 + slot * 1000 + epoch),
    masterId,
    leaseTtlSecs: LEASE_TTL_SECS,
    maxAttempts: MAX_ATTEMPTS,
    // Count cap only, far above what a run creates: nothing is pruned, so history is the model's.
    historyTtlSecs: 0,
    historyLimit: 1000,
    cooldown: POLICY,
  });
  r.opened.push(store);
  return store;
}

/** One run: fresh Kv data under a random prefix, SLOTS instances, the commands, a full comparison. */
async function runOnce(
  makeHarness: () => Promise<KvHarness>,
  leasesOnClock: boolean,
  cmds: Iterable<Cmd>,
): Promise<void> {
  const h = await makeHarness();
  const real: Real = {
    h,
    prefix: `/model/${randomUUID()}`,
    stores: [],
    opened: [],
    claims: new Map(),
  };
  try {
    const model: Model = {
      leasesOnClock,
      startedAt: h.clock.now(),
      now: h.clock.now(),
      tasks: new Map(),
      holders: new Map(),
      claims: [],
      slots: [],
      cooldowns: new Map(),
      nextKey: 0,
      failuresCounted: 0,
    };
    for (let slot = 0; slot < SLOTS; slot++) {
      const masterId = `master-${slot}-0`;
      model.slots.push({ epoch: 0, masterId, manualStreak: 0 });
      real.stores.push(await openStore(real, slot, masterId, 0));
    }
    await asyncModelRun(() => Promise.resolve({ model, real }), cmds);
    await compareAll(model, storeOf(real, 0));
  } finally {
    for (const s of real.opened) await s.close().catch(() => undefined);
    const kv = await h.connect();
    await kv.deletePrefix(`${real.prefix}/`).catch(() => undefined);
    await h.close();
  }
}

describe('TaskStore against a reference model', () => {
  it('agrees with the reference model over random command sequences on MemoryKv', async () => {
    await assert(
      asyncProperty(commands(commandArbs(true), { maxCommands: 200, size: 'max' }), (cmds) =>
        runOnce(memoryHarness, true, cmds),
      ),
      { numRuns: 100, seed: SEED },
    );
  }, 180_000);

  it('agrees with the reference model over random command sequences on etcd', async () => {
    const endpoints = inject('etcdEndpoints');
    await assert(
      asyncProperty(commands(commandArbs(false), { maxCommands: 100, size: 'max' }), (cmds) =>
        runOnce(() => etcdHarness(endpoints), false, cmds),
      ),
      { numRuns: 15, seed: SEED },
    );
  }, 120_000);
});

describe('TaskStore bugs found by the reference model', () => {
  // Found by the model: a late finish of a lost claim used to unmark the instance's newer claim of
  // the same task, and its next recovery then released that live claim as a stray one.
  it('keeps its live re-claim of a task when its late finish of the earlier, lost claim is rejected', async () => {
    const h = await memoryHarness();
    const prefix = `/model/${randomUUID()}`;
    const opened: TaskStore[] = [];
    const open = async (n: number): Promise<TaskStore> => {
      const store = await TaskStore.open({
        kv: await h.connect(),
        prefix,
        clock: h.clock,
        random: seededRandom(n),
        masterId: `master-${n}`,
        leaseTtlSecs: LEASE_TTL_SECS,
      });
      opened.push(store);
      return store;
    };
    try {
      const [a, b] = [await open(1), await open(2)];
      const { task } = await a.enqueue('compact', 's0');
      const first = await b.claimNext(['compact']);
      const lease = b.session.lease;
      if (!first || !lease) throw new Error('expected a claim under a live session');
      await lease.revoke();
      b.session.markLost(lease.id);
      await b.session.ready();
      expect(await a.recoverOrphaned()).toEqual({ requeued: [task.id], failed: [] });
      const second = await b.claimNext(['compact']);
      if (!second) throw new Error('expected the recovered task to be claimed again');
      expect(second.task).toMatchObject({ id: task.id, attempt: 2, owner: 'master-2' });
      await expect(b.finish(first, { ok: true, detail: 'late' })).rejects.toBeInstanceOf(ClaimLostError);
      // Today b takes its own live claim for a stray one here, and requeues the task it is running.
      expect(await b.recoverOrphaned()).toEqual({ requeued: [], failed: [] });
      expect(await b.finish(second, { ok: true, detail: 'ok' })).toMatchObject({ task: { state: 'done' } });
    } finally {
      for (const s of opened) await s.close().catch(() => undefined);
      await h.close();
    }
  });
});
