import { KIND_PATTERN, type TaskKind } from './model.js';

/** Lowercase hex of a target's UTF-8 bytes: how targets appear in keys. */
export function targetHex(target: string): string {
  return Buffer.from(target, 'utf8').toString('hex');
}

/** Inverse of {@link targetHex}. */
export function targetFromHex(hex: string): string {
  return Buffer.from(hex, 'hex').toString('utf8');
}

/** A (kind, target) pair named by a key: see {@link parsePairKey}. */
export interface PairKey {
  /** The task kind. */
  readonly kind: TaskKind;
  /** The target (store name), decoded from the key's hex. */
  readonly target: string;
}

const HEX = /^(?:[0-9a-f]{2})+$/;
// Fatal: bytes that are not UTF-8 are no target's; BOM kept: a leading U+FEFF is part of the name.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The (kind, target) of a `<section><kind>/<target-hex>` key, where `section` is one of the
 * per-pair sections of {@link Keys} (`cooldownPrefix()`, `parkedPrefix()`, `dedupePrefix`), or of
 * a key of one pair's entries with `<section>` `heldPrefix()` or `timelinePrefix()` once its
 * trailing `/<id>` is cut off. Undefined for any key not of that shape: outside the section, a
 * kind that is no kind's name, hex that is empty, not lowercase or not UTF-8, or anything after it.
 * What {@link keysFor} builds, it parses back.
 */
export function parsePairKey(section: string, key: string): PairKey | undefined {
  if (!key.startsWith(section)) return undefined;
  const rest = key.slice(section.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return undefined;
  const kind = rest.slice(0, slash);
  const hex = rest.slice(slash + 1);
  if (!KIND_PATTERN.test(kind) || !HEX.test(hex)) return undefined;
  try {
    return { kind, target: UTF8.decode(Buffer.from(hex, 'hex')) };
  } catch {
    return undefined;
  }
}

/**
 * The smallest key that sorts after `key`: where a range resumes past a key it has read, or the
 * exclusive end of a range that includes `key`.
 */
export function keyAfter(key: string): string {
  return `${key}\0`;
}

/**
 * The etcd key layout under one prefix (docs/ARCHITECTURE.md §2.4). Every key maintd writes is built here,
 * so nothing can land outside the prefix.
 */
export interface Keys {
  /** The prefix, trailing slashes removed. */
  readonly prefix: string;
  /** `P/tasks/<id>`: the authoritative task record. */
  task(id: string): string;
  /** `P/tasks/`. */
  readonly tasksPrefix: string;
  /** `P/queue/<kind>/<id>`: present while the task is queued. */
  queue(kind: TaskKind, id: string): string;
  /** `P/queue/<kind>/`, or `P/queue/` for every kind. */
  queuePrefix(kind?: TaskKind): string;
  /** `P/running/<id>`: present while the task runs (value: owner). */
  running(id: string): string;
  /** `P/running/`. */
  readonly runningPrefix: string;
  /** `P/claims/<id>`: the owner’s claim, on its session lease. */
  claim(id: string): string;
  /** `P/claims/`. */
  readonly claimsPrefix: string;
  /** `P/target-locks/<hex>`: one running task per store, on the owner’s session lease. */
  targetLock(target: string): string;
  /** `P/dedupe/<kind>/<hex>`: the active dependency-free task of (kind, target). */
  dedupe(kind: TaskKind, target: string): string;
  /** `P/dedupe/`. */
  readonly dedupePrefix: string;
  /** `P/dedupe/<kind>/`: the dedupe keys of one kind, i.e. its active dependency-free tasks. */
  dedupeKindPrefix(kind: TaskKind): string;
  /** `P/cooldown/<kind>/<hex>`: the failure-cooldown record, on a lease of the cooldown max. */
  cooldown(kind: TaskKind, target: string): string;
  /** `P/cooldown/<kind>/`, or `P/cooldown/` for every kind. */
  cooldownPrefix(kind?: TaskKind): string;
  /** `P/parked/<kind>/<hex>`: an operator’s park of (kind, target); no lease, it lasts until released. */
  parked(kind: TaskKind, target: string): string;
  /** `P/parked/<kind>/`, or `P/parked/` for every kind. */
  parkedPrefix(kind?: TaskKind): string;
  /** `P/timeline/<kind>/<hex>/<id>`: one event of (kind, target)'s timeline; ids are UUIDv7, so key order is time order. */
  timeline(kind: TaskKind, target: string, id: string): string;
  /** `P/timeline/<kind>/<hex>/` (one pair's events), `P/timeline/<kind>/` or `P/timeline/`. */
  timelinePrefix(kind?: TaskKind, target?: string): string;
  /** `P/held/<kind>/<hex>/<id>`: present while a park holds automatic task `id` of (kind, target) back. */
  held(kind: TaskKind, target: string, id: string): string;
  /** `P/held/<kind>/<hex>/` (one pair's held tasks), or `P/held/` for every pair. */
  heldPrefix(kind?: TaskKind, target?: string): string;
  /** `P/audit/<id>`: one entry of the audit trail; ids are UUIDv7, so key order is time order. */
  audit(id: string): string;
  /** `P/audit/`. */
  readonly auditPrefix: string;
  /** `P/stats/<hex>`: the store’s aggregated stats row. */
  stats(target: string): string;
  /** `P/stats/`. */
  readonly statsPrefix: string;
  /** `P/workers/<hex>` (hex of the endpoint's UTF-8 bytes): the worker's latest stats-scan result. */
  worker(endpoint: string): string;
  /** `P/workers/`. */
  readonly workersPrefix: string;
  /** `P/masters/<id>`: a live master’s registration, on its session lease. */
  master(id: string): string;
  /** `P/masters/`. */
  readonly mastersPrefix: string;
  /** `P/locks/<name>`: a coordination lock, on the holder’s session lease. */
  lock(name: string): string;
  /** `P/sweeps/<name>`: the interval slot a periodic job last ran in. */
  sweep(name: string): string;
  /** `P/cluster`: the fleet-wide feature gates (docs/ARCHITECTURE.md §2.8). */
  readonly cluster: string;
  /** `P/manual/<kind>/<id>`: present while manual task `id` is queued: the lane claimed before the queue's automatic work. */
  manual(kind: TaskKind, id: string): string;
  /** `P/manual/<kind>/`, or `P/manual/` for every kind. */
  manualPrefix(kind?: TaskKind): string;
  /** `P/capacity/<master id>`: a master's slot time over its last hour (docs/ARCHITECTURE.md §3.5); no lease. */
  capacity(masterId: string): string;
  /** `P/capacity/`. */
  readonly capacityPrefix: string;
}

/** `base`, narrowed to one kind and then to one of its targets, when given. */
function pairPrefix(base: string, kind: TaskKind | undefined, target: string | undefined): string {
  if (kind === undefined) return base;
  return target === undefined ? `${base}${kind}/` : `${base}${kind}/${targetHex(target)}/`;
}

/** The key prefix when none is given (docs/ARCHITECTURE.md §2.4; the default of `ETCD_PREFIX`). */
export const DEFAULT_PREFIX = '/maintd';

/** Builds the key layout for `prefix` (trailing slashes are dropped; default {@link DEFAULT_PREFIX}). */
export function keysFor(prefix = DEFAULT_PREFIX): Keys {
  const p = prefix.replace(/\/+$/, '');
  return {
    prefix: p,
    task: (id) => `${p}/tasks/${id}`,
    tasksPrefix: `${p}/tasks/`,
    queue: (kind, id) => `${p}/queue/${kind}/${id}`,
    queuePrefix: (kind) => (kind ? `${p}/queue/${kind}/` : `${p}/queue/`),
    running: (id) => `${p}/running/${id}`,
    runningPrefix: `${p}/running/`,
    claim: (id) => `${p}/claims/${id}`,
    claimsPrefix: `${p}/claims/`,
    targetLock: (target) => `${p}/target-locks/${targetHex(target)}`,
    dedupe: (kind, target) => `${p}/dedupe/${kind}/${targetHex(target)}`,
    dedupePrefix: `${p}/dedupe/`,
    dedupeKindPrefix: (kind) => `${p}/dedupe/${kind}/`,
    cooldown: (kind, target) => `${p}/cooldown/${kind}/${targetHex(target)}`,
    cooldownPrefix: (kind) => (kind ? `${p}/cooldown/${kind}/` : `${p}/cooldown/`),
    parked: (kind, target) => `${p}/parked/${kind}/${targetHex(target)}`,
    parkedPrefix: (kind) => (kind ? `${p}/parked/${kind}/` : `${p}/parked/`),
    timeline: (kind, target, id) => `${p}/timeline/${kind}/${targetHex(target)}/${id}`,
    timelinePrefix: (kind, target) => pairPrefix(`${p}/timeline/`, kind, target),
    held: (kind, target, id) => `${p}/held/${kind}/${targetHex(target)}/${id}`,
    heldPrefix: (kind, target) => pairPrefix(`${p}/held/`, kind, target),
    audit: (id) => `${p}/audit/${id}`,
    auditPrefix: `${p}/audit/`,
    stats: (target) => `${p}/stats/${targetHex(target)}`,
    statsPrefix: `${p}/stats/`,
    // Hex like a target: an endpoint is a URL, whose slashes must not nest keys.
    worker: (endpoint) => `${p}/workers/${targetHex(endpoint)}`,
    workersPrefix: `${p}/workers/`,
    master: (id) => `${p}/masters/${id}`,
    mastersPrefix: `${p}/masters/`,
    lock: (name) => `${p}/locks/${name}`,
    sweep: (name) => `${p}/sweeps/${name}`,
    cluster: `${p}/cluster`,
    manual: (kind, id) => `${p}/manual/${kind}/${id}`,
    manualPrefix: (kind) => (kind ? `${p}/manual/${kind}/` : `${p}/manual/`),
    capacity: (masterId) => `${p}/capacity/${masterId}`,
    capacityPrefix: `${p}/capacity/`,
  };
}
