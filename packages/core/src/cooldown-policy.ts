/**
 * The failure-cooldown policy as pure functions: no I/O, no clock, no randomness. The store
 * reads, calls {@link nextCooldown}, and writes what it returns.
 */
import ansiRegex from 'ansi-regex';
import { type ErrorClass, type TaskCooldown, type TaskKind, carryUnknownFields } from './model.js';

/** Cooldown settings (docs/ARCHITECTURE.md §2.7). */
export interface CooldownPolicy {
  /** Consecutive failures before a window opens; 0 disables the feature. Default 3. */
  readonly afterFailures: number;
  /** Window when the threshold is first reached, in seconds. Default 600. */
  readonly baseSecs: number;
  /** Longest window, and the TTL of the record's lease, in seconds. Default 21600. */
  readonly maxSecs: number;
  /** Downward jitter fraction in [0, 1). Default 0.1. */
  readonly jitter: number;
  /** Kinds the cooldown applies to: `all` (the default), or a list. */
  readonly kinds: readonly TaskKind[] | 'all';
  /** Fleet guard: open no window while more than this percentage of the kind's stores cool. Default 25. */
  readonly maxPercent: number;
  /** Count `infrastructure` failures too. Default false. */
  readonly countInfrastructure: boolean;
}

/** The defaults of docs/ARCHITECTURE.md §2.7. */
export const DEFAULT_COOLDOWN_POLICY: CooldownPolicy = Object.freeze({
  afterFailures: 3,
  baseSecs: 600,
  maxSecs: 21600,
  jitter: 0.1,
  kinds: 'all',
  maxPercent: 25,
  countInfrastructure: false,
});

/** Longest record kept for `last_error`. */
export const LAST_ERROR_MAX = 512;

/**
 * A hash of (kind, target, failures) in [0, 1): FNV-1a over the UTF-8 bytes. Every master
 * computes the same value, so every master computes the same `until_ms`.
 */
export function jitterHash(kind: TaskKind, target: string, failures: number): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(`${kind}\0${target}\0${failures}`, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h / 0x1_0000_0000;
}

/**
 * Window length in ms for a target at `failures` consecutive failures: 0 below the threshold,
 * else `min(base · 2^(f−N), max) · (1 − jitter · h)`. Jitter only shortens, so the cap holds.
 */
export function cooldownWindowMs(policy: CooldownPolicy, kind: TaskKind, target: string, failures: number): number {
  const n = policy.afterFailures;
  if (n <= 0 || failures < n) return 0;
  // Past 2^30 the product is far beyond any sane max; clamping keeps it finite.
  const over = Math.min(failures - n, 30);
  const secs = Math.min(policy.baseSecs * 2 ** over, policy.maxSecs);
  const factor = 1 - policy.jitter * jitterHash(kind, target, failures);
  return Math.floor(secs * 1000 * factor);
}

/** Whether failures of this kind and class count toward a cooldown under `policy`. */
export function counts(policy: CooldownPolicy, kind: TaskKind, errorClass: ErrorClass): boolean {
  return appliesTo(policy, kind) && (errorClass === 'target' || policy.countInfrastructure);
}

/**
 * Whether `policy` runs the cooldown for `kind` at all: on (`afterFailures` above 0) and the kind
 * among its `kinds`. Where it does not, no failure counts and no record gates a sweep, including
 * windows opened under an earlier configuration: turning the feature off takes effect at once,
 * not when the last window lapses (up to `maxSecs` later).
 */
export function appliesTo(policy: CooldownPolicy, kind: TaskKind): boolean {
  return policy.afterFailures > 0 && (policy.kinds === 'all' || policy.kinds.includes(kind));
}

// Control strings (OSC such as a window title, DCS, SOS, PM, APC) run to a BEL or ST; a terminal
// swallows an unterminated one to the end, so it is dropped to the end.
const CONTROL_STRINGS =
  // eslint-disable-next-line no-control-regex
  /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c|$)/g;
// C0, DEL and C1 controls: whatever survives escape-sequence stripping must not reach a terminal.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;
// Escape sequences (CSI and the like), with the pattern Node 20's util.stripVTControlCharacters
// used. Pinned as a dependency rather than taken from the runtime: Node 24 changed that function,
// so one worker error would be stored as two texts (and two causes) by masters on two Node lines.
const ESCAPE_SEQUENCES = ansiRegex();
// Bidirectional overrides and isolates reorder what follows them on screen ("Trojan Source").
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Removes terminal escape sequences, control characters and bidirectional controls, folds
 * whitespace, and bounds the length (in code points), so worker text is safe to store, log and
 * draw.
 */
export function sanitizeError(message: string, max = LAST_ERROR_MAX): string {
  const clean = message
    .replace(CONTROL_STRINGS, '')
    .replace(ESCAPE_SEQUENCES, '')
    .replace(CONTROL_CHARS, ' ')
    .replace(BIDI_CONTROLS, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  return [...clean].slice(0, max).join('');
}

/** Whether a record currently gates the automatic sweeps. */
export function isCooling(record: TaskCooldown | undefined, nowMs: number): boolean {
  return record?.until_ms != null && record.until_ms > nowMs;
}

/** One failed task, as reported to the cooldown. */
export interface FailureReport {
  /** Kind of the failed task. */
  readonly kind: TaskKind;
  /** Store it ran against. */
  readonly target: string;
  /** Id of the failed task: a second report of it counts once. */
  readonly taskId: string;
  /** Its error text (sanitised before storing). */
  readonly error: string;
  /** `target` or `infrastructure`. */
  readonly errorClass: ErrorClass;
}

/** How many of the kind's stores are known and already cooling, for the fleet guard. */
export interface FleetState {
  /** Stores of the fleet (stats rows). 0 = unknown: the guard does not apply. */
  readonly knownStores: number;
  /** Targets of this kind with an active window, this target excluded. */
  readonly coolingOthers: number;
}

/** What {@link nextCooldown} decided. */
export type CooldownDecision =
  | { readonly action: 'ignore'; readonly reason: 'disabled' | 'kind' | 'class' }
  | { readonly action: 'duplicate'; readonly record: TaskCooldown }
  | {
      readonly action: 'write';
      readonly record: TaskCooldown;
      /** The write leaves the target with an active window. */
      readonly cooling: boolean;
      /** A window would have opened, but the fleet guard held it back. */
      readonly guardOverflow: boolean;
      /** Window length in ms (0 when not cooling). */
      readonly windowMs: number;
    };

/** Whether a failure at this count would open a window (so the fleet guard must be consulted). */
export function wouldCool(policy: CooldownPolicy, prev: TaskCooldown | undefined): boolean {
  return policy.afterFailures > 0 && (prev?.failures ?? 0) + 1 >= policy.afterFailures;
}

/**
 * The next cooldown record after a failure, given the stored one (or none). Idempotent per task
 * id: reporting the same task twice counts once. The next record keeps the fields a newer
 * release wrote in the stored one, for `encodeCooldown` to write back.
 */
export function nextCooldown(
  policy: CooldownPolicy,
  prev: TaskCooldown | undefined,
  failure: FailureReport,
  nowMs: number,
  fleet: FleetState = { knownStores: 0, coolingOthers: 0 },
): CooldownDecision {
  if (policy.afterFailures <= 0) return { action: 'ignore', reason: 'disabled' };
  if (!appliesTo(policy, failure.kind)) return { action: 'ignore', reason: 'kind' };
  if (!counts(policy, failure.kind, failure.errorClass)) return { action: 'ignore', reason: 'class' };
  if (prev && prev.last_task_id === failure.taskId) return { action: 'duplicate', record: prev };

  const failures = (prev?.failures ?? 0) + 1;
  let windowMs = cooldownWindowMs(policy, failure.kind, failure.target, failures);
  let guardOverflow = false;
  if (windowMs > 0 && fleet.knownStores > 0 && (fleet.coolingOthers * 100) / fleet.knownStores > policy.maxPercent) {
    windowMs = 0;
    guardOverflow = true;
  }
  // The same record counted on: fields a newer release keeps in it survive this count.
  const record: TaskCooldown = carryUnknownFields(prev, {
    kind: failure.kind,
    target: failure.target,
    failures,
    until_ms: windowMs > 0 ? nowMs + windowMs : null,
    last_error: sanitizeError(failure.error),
    last_error_class: failure.errorClass,
    first_failure_ms: prev?.first_failure_ms ?? nowMs,
    last_failure_ms: nowMs,
    last_task_id: failure.taskId,
  });
  return { action: 'write', record, cooling: windowMs > 0, guardOverflow, windowMs };
}
