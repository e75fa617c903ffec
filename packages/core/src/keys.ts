import type { TaskKind } from './model.js';

/** Lowercase hex of a target's UTF-8 bytes: how targets appear in keys. */
export function targetHex(target: string): string {
  return Buffer.from(target, 'utf8').toString('hex');
}

/** Inverse of {@link targetHex}. */
export function targetFromHex(hex: string): string {
  return Buffer.from(hex, 'hex').toString('utf8');
}

/**
 * The etcd key layout under one prefix (DESIGN §2.4). Every key maintd writes is built here,
 * so nothing can land outside the prefix.
 */
export interface Keys {
  readonly prefix: string;
  task(id: string): string;
  readonly tasksPrefix: string;
  queue(kind: TaskKind, id: string): string;
  queuePrefix(kind?: TaskKind): string;
  running(id: string): string;
  readonly runningPrefix: string;
  claim(id: string): string;
  readonly claimsPrefix: string;
  targetLock(target: string): string;
  dedupe(kind: TaskKind, target: string): string;
  readonly dedupePrefix: string;
  cooldown(kind: TaskKind, target: string): string;
  cooldownPrefix(kind?: TaskKind): string;
  stats(target: string): string;
  readonly statsPrefix: string;
  master(id: string): string;
  readonly mastersPrefix: string;
  lock(name: string): string;
  sweep(name: string): string;
}

/** Builds the key layout for `prefix` (trailing slashes are dropped; default `/maintd`). */
export function keysFor(prefix = '/maintd'): Keys {
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
    cooldown: (kind, target) => `${p}/cooldown/${kind}/${targetHex(target)}`,
    cooldownPrefix: (kind) => (kind ? `${p}/cooldown/${kind}/` : `${p}/cooldown/`),
    stats: (target) => `${p}/stats/${targetHex(target)}`,
    statsPrefix: `${p}/stats/`,
    master: (id) => `${p}/masters/${id}`,
    mastersPrefix: `${p}/masters/`,
    lock: (name) => `${p}/locks/${name}`,
    sweep: (name) => `${p}/sweeps/${name}`,
  };
}
