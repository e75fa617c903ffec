/**
 * The scheduler's settings (docs/ARCHITECTURE.md §3.1): every setting of the master but those of its
 * HTTP API, which the master adds in its own schema. {@link schedulerSettings} is the source of
 * truth for each: keyed by its env var, with its default (applied by the schema itself), its
 * description and its secrecy. The master composes them into the schema its flags, `--help`,
 * `--print-config` and error messages are derived from; {@link loadConfig} reads them alone, for
 * what runs a scheduler without the API (the simulator, the tests).
 */
import {
  type CooldownPolicy,
  DEFAULT_COOLDOWN_POLICY,
  DEFAULT_PREFIX,
  DEFAULT_STORE_OPTIONS,
  MIN_SESSION_TTL_SECS,
  type TaskKind,
  isTimeZone,
  parseTaskWindows,
} from '@maintd/core';
import {
  type LoadResult as SettingsLoadResult,
  type ValueType,
  bool,
  checkEtcdSettings,
  decimal,
  etcdConfig,
  etcdSettings,
  fail,
  logSettings,
  optional,
  setting,
  settingsLoader,
  timerSecs,
  urlList,
  wholeNumber,
  word,
} from '@maintd/settings';
import { z } from 'zod';
import type { Config, SweepConfig } from './config.js';
import { type KINDS, KIND_NAMES, kindSpec } from './kinds/index.js';

// ---- value types of the scheduler's own -----------------------------------------------------

const taskKinds: ValueType<readonly TaskKind[] | 'all'> = {
  placeholder: 'kinds',
  schema: z.string().transform((raw, ctx) => {
    const expected = `expected "all" or a comma-separated list of ${KIND_NAMES.join(', ')}`;
    const items = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    // Kept as `all`, not this registry's list: the policy then covers whatever kinds the master runs.
    if (items.length === 1 && items[0] === 'all') return 'all' as const;
    const unknown = items.find((s) => !KIND_NAMES.includes(s));
    if (unknown !== undefined) return fail(ctx, expected, { got: unknown });
    if (items.length === 0) return fail(ctx, expected);
    // Schema order, not input order, so equal settings compare and print equal.
    return KIND_NAMES.filter((k) => items.includes(k));
  }),
};

/** TASK_WINDOWS: checked here for its form and kinds; its ranges are read in TASK_WINDOWS_TZ by {@link toConfig}. */
const taskWindows: ValueType<string> = {
  placeholder: 'kind=HH:MM-HH:MM[;…],…',
  schema: z.string().transform((raw, ctx) => {
    const parsed = parseTaskWindows(raw, 'UTC');
    if (!parsed.ok) return fail(ctx, parsed.error);
    const unknown = parsed.windows.find((w) => !KIND_NAMES.includes(w.kind));
    if (unknown) return fail(ctx, `expected kinds among ${KIND_NAMES.join(', ')}`, { got: unknown.kind });
    return raw;
  }),
};

const timeZone: ValueType<string> = {
  placeholder: 'zone',
  schema: z
    .string()
    .transform((raw, ctx) =>
      isTimeZone(raw) ? raw : fail(ctx, 'expected an IANA time zone such as UTC or Europe/Berlin', { got: raw }),
    ),
};

// ---- the schema --------------------------------------------------------------------------------

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** The settings every kind adds (its sweep's interval and threshold), merged in registry order. */
type KindSettings = UnionToIntersection<(typeof KINDS)[keyof typeof KINDS]['settings']>;
const kindSettings = Object.assign({}, ...KIND_NAMES.map((k) => kindSpec(k).settings)) as KindSettings;
/** The settings holding the slots of the kinds' own pools: listed with `TASK_CONCURRENCY`, not with the sweeps. */
const poolSettingNames = new Set(KIND_NAMES.flatMap((k) => kindSpec(k).pool?.sizeSetting ?? []));
const kindSettingsOf = (pools: boolean): KindSettings =>
  Object.fromEntries(
    Object.entries(kindSettings).filter(([name]) => poolSettingNames.has(name) === pools),
  ) as KindSettings;

// ---- the shape------------------------------------------------------------------------

/** The scheduler's settings, keyed by env var, in the order `--help` lists them. */
export const schedulerSettings = {
  MASTER_ID: optional(word('id', 'an id', { forbid: /\//, why: 'without "/" (it is part of an etcd key)' }), {
    description: "This master's identity in etcd; must be unique among the masters sharing ETCD_PREFIX.",
    defaultText: '<hostname>-<pid>-<random>',
  }),
  ...etcdSettings({
    endpointsDescription: 'etcd endpoints; empty = embedded in-memory store (single master, not durable).',
    prefixDescription: 'Key prefix under which all maintd state lives in etcd.',
    defaultPrefix: DEFAULT_PREFIX,
  }),
  ETCD_LEASE_TTL_SECS: setting(timerSecs(MIN_SESSION_TTL_SECS), String(DEFAULT_STORE_OPTIONS.leaseTtlSecs), {
    description: `TTL of this master's session lease; peers recover its tasks this long after it dies (minimum ${MIN_SESSION_TTL_SECS}).`,
  }),
  WORKER_ENDPOINTS: setting(urlList({ allowPath: true }), '', {
    description: 'Worker base URLs; empty = no workers (every task fails as an infrastructure failure).',
  }),
  WORKER_TOKEN: optional(word('token', 'a token'), {
    description: 'Bearer token sent to workers; unset = no Authorization header.',
    secret: true,
  }),
  WORKER_TIMEOUT_SECS: setting(timerSecs(1), '60', {
    description: 'Timeout of each request to a worker.',
  }),
  STATS_SCAN_INTERVAL_SECS: setting(timerSecs(0), '60', {
    description: 'How often worker store stats are scanned; 0 disables the scan.',
  }),
  ...kindSettingsOf(false),
  SWEEP_MAX_NEW_TASKS: setting(wholeNumber(1), '256', {
    description: 'Most tasks one sweep enqueues.',
  }),
  TASK_CONCURRENCY: setting(wholeNumber(1), '4', {
    description: 'Slots of the general pool: every kind without a pool of its own, or whose pool has 0 slots.',
  }),
  ...kindSettingsOf(true),
  TASK_MAX_ATTEMPTS: setting(wholeNumber(1), String(DEFAULT_STORE_OPTIONS.maxAttempts), {
    description:
      'Times a task orphaned mid-run (its master died or lost its session) is requeued before it is failed; a failed run is not retried.',
  }),
  TASK_HISTORY_LIMIT: setting(wholeNumber(1), String(DEFAULT_STORE_OPTIONS.historyLimit), {
    description: 'Finished tasks kept in history.',
  }),
  TASK_HISTORY_TTL_SECS: setting(
    wholeNumber(0, Number.MAX_SAFE_INTEGER, 'secs'),
    String(DEFAULT_STORE_OPTIONS.historyTtlSecs),
    {
      description: 'Age at which finished tasks leave history; 0 = only TASK_HISTORY_LIMIT applies.',
    },
  ),
  TASK_TIMELINE_LIMIT: setting(wholeNumber(1), String(DEFAULT_STORE_OPTIONS.timelineLimit), {
    description:
      'Events kept per (kind, store) on its timeline (failures, windows, resets, parks, manual runs); the oldest beyond it are deleted.',
  }),
  TASK_TIMELINE_TTL_SECS: setting(
    wholeNumber(0, Number.MAX_SAFE_INTEGER, 'secs'),
    String(DEFAULT_STORE_OPTIONS.timelineTtlSecs),
    {
      description:
        'Age at which timeline events are deleted, so a store that stopped failing leaves nothing behind; 0 = only TASK_TIMELINE_LIMIT applies.',
    },
  ),
  AUDIT_LIMIT: setting(wholeNumber(1), String(DEFAULT_STORE_OPTIONS.auditLimit), {
    description:
      'Entries kept in the audit trail of operator actions (enqueues, parks, resets, releases, cluster changes); the oldest beyond it are deleted.',
  }),
  AUDIT_TTL_SECS: setting(wholeNumber(0, Number.MAX_SAFE_INTEGER, 'secs'), String(DEFAULT_STORE_OPTIONS.auditTtlSecs), {
    description: 'Age at which audit entries are deleted (90 days by default); 0 = only AUDIT_LIMIT applies.',
  }),
  TASK_COOLDOWN_AFTER_FAILURES: setting(wholeNumber(0), String(DEFAULT_COOLDOWN_POLICY.afterFailures), {
    description:
      'Consecutive failures of a (kind, store) before sweeps skip it for a window; 0 disables cooldowns, windows already open included.',
  }),
  TASK_COOLDOWN_BASE_SECS: setting(
    wholeNumber(1, Number.MAX_SAFE_INTEGER, 'secs'),
    String(DEFAULT_COOLDOWN_POLICY.baseSecs),
    {
      description: 'First cooldown window; it doubles with every further failure.',
    },
  ),
  TASK_COOLDOWN_MAX_SECS: setting(
    wholeNumber(1, Number.MAX_SAFE_INTEGER, 'secs'),
    String(DEFAULT_COOLDOWN_POLICY.maxSecs),
    {
      description:
        'Longest cooldown window, and how long a failure count is remembered; at least TASK_COOLDOWN_BASE_SECS.',
    },
  ),
  TASK_COOLDOWN_JITTER: setting(decimal(0, 1, true, 'fraction'), String(DEFAULT_COOLDOWN_POLICY.jitter), {
    description:
      'Fraction by which a window is shortened at most, so cooled stores do not return in lockstep; in [0, 1).',
  }),
  TASK_COOLDOWN_KINDS: setting(taskKinds, 'all', {
    description: `Task kinds cooldowns apply to: all, or a comma-separated list of ${KIND_NAMES.join(', ')}; sweeps of a kind left out skip no window.`,
  }),
  TASK_COOLDOWN_MAX_PERCENT: setting(decimal(0, 100, false, 'percent'), String(DEFAULT_COOLDOWN_POLICY.maxPercent), {
    description:
      "Open no new window while more than this percentage of a kind's stores are cooling (the fleet is failing).",
  }),
  TASK_COOLDOWN_COUNT_INFRA: setting(bool, String(DEFAULT_COOLDOWN_POLICY.countInfrastructure), {
    description: 'Count infrastructure failures (no worker answered) toward cooldowns, not only store failures.',
  }),
  TASK_WINDOWS: setting(taskWindows, '', {
    description:
      "When each kind's automatic work may start, in TASK_WINDOWS_TZ: e.g. compact=22:00-05:00,index_id=22:00-05:00;12:00-13:00. Outside it the kind's sweeps enqueue nothing and its queued automatic tasks wait; running tasks finish and manual runs are never held. A kind left out may run at any time.",
  }),
  TASK_WINDOWS_TZ: setting(timeZone, 'UTC', {
    description:
      'The IANA time zone of TASK_WINDOWS (e.g. Europe/Berlin), whose daylight saving time the windows follow.',
  }),
  SHUTDOWN_GRACE_SECS: setting(timerSecs(0), '30', {
    description: 'How long running tasks may finish after SIGTERM/SIGINT before the session is released.',
  }),
  ...logSettings(),
};

const schedulerObject = z.object(schedulerSettings);

/** The scheduler's settings, parsed: typed values with defaults applied, keyed by env var name. */
export type Settings = z.output<typeof schedulerObject>;

/**
 * etcd settings with no etcd mean a forgotten ETCD_ENDPOINTS, not a wish for the embedded store:
 * a rule of a schema's `superRefine`, over values that may have failed their own parse.
 */
export function checkEmbeddedStore(
  s: Pick<Settings, 'ETCD_ENDPOINTS' | 'ETCD_USERNAME' | 'ETCD_CA_CERT' | 'ETCD_CLIENT_CERT'>,
  ctx: z.RefinementCtx,
): void {
  if (Array.isArray(s.ETCD_ENDPOINTS) && s.ETCD_ENDPOINTS.length === 0) {
    const stray = (['ETCD_USERNAME', 'ETCD_CA_CERT', 'ETCD_CLIENT_CERT'] as const).filter((k) => s[k] !== undefined);
    if (stray.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['ETCD_ENDPOINTS'],
        message: `required because ${stray.join(', ')} ${stray.length === 1 ? 'is' : 'are'} set (empty means the embedded store, which would ignore ${stray.length === 1 ? 'it' : 'them'})`,
      });
    }
  }
}

/** The longest cooldown window is at least the first: a rule of a schema's `superRefine`. */
export function checkCooldownWindow(
  s: Pick<Settings, 'TASK_COOLDOWN_BASE_SECS' | 'TASK_COOLDOWN_MAX_SECS'>,
  ctx: z.RefinementCtx,
): void {
  // Fields that failed their own parse are not numbers here; they are reported already.
  if (
    typeof s.TASK_COOLDOWN_BASE_SECS === 'number' &&
    typeof s.TASK_COOLDOWN_MAX_SECS === 'number' &&
    s.TASK_COOLDOWN_MAX_SECS < s.TASK_COOLDOWN_BASE_SECS
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['TASK_COOLDOWN_MAX_SECS'],
      message: `expected at least TASK_COOLDOWN_BASE_SECS (${s.TASK_COOLDOWN_BASE_SECS})`,
    });
  }
}

/**
 * The schema of every scheduler setting (docs/ARCHITECTURE.md §3.1, §2.7). Input: raw strings, absent
 * when unset. Output: typed values with defaults applied.
 */
const SettingsSchema = schedulerObject.superRefine(
  (s, ctx) => {
    checkEtcdSettings(s, ctx);
    checkEmbeddedStore(s, ctx);
    checkCooldownWindow(s, ctx);
  },
  // Run even when a field failed, so one run reports every problem.
  { when: () => true },
);

const loader = settingsLoader({
  program: 'maintd',
  usage: ['[options]'],
  about: ["The maintd master's scheduler settings, without those of its HTTP API."],
  shape: schedulerSettings,
  schema: SettingsSchema,
  emptyDefaultText: 'empty',
});

// ---- loading -----------------------------------------------------------------------------------

/** What names a master when MASTER_ID is unset; passed in so parsing stays pure. */
export interface MasterIdentity {
  readonly hostname: string;
  readonly pid: number;
  /** Random suffix of the default MASTER_ID. */
  readonly random: () => string;
}

/** Everything {@link loadConfig} reads; passed in so parsing stays pure. */
export interface LoadConfigInput extends MasterIdentity {
  /** Arguments after the script, i.e. `process.argv.slice(2)`. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** What startup should do. Bad input is a result, not an exception. */
export type LoadResult<C = Config> = SettingsLoadResult<C>;

/** Settings with the computed defaults filled in. */
export type Resolved<S extends Pick<Settings, 'MASTER_ID'> = Settings> = Omit<S, 'MASTER_ID'> & {
  readonly MASTER_ID: string;
};

/** Fills in the computed defaults: MASTER_ID, `<hostname>-<pid>-<random>` when unset. */
export function resolveSettings<S extends Pick<Settings, 'MASTER_ID'>>(s: S, id: MasterIdentity): Resolved<S> {
  return { ...s, MASTER_ID: s.MASTER_ID ?? `${id.hostname}-${id.pid}-${id.random()}` };
}

/**
 * Parses argv and env into the scheduler's {@link Config}. Precedence: flag > env var > default;
 * an empty value (env or `--flag=`) counts as unset. `--help`/`-h` wins over everything else, then
 * `--version`/`-V`.
 */
export function loadConfig(input: LoadConfigInput): LoadResult {
  const loaded = loader.load(input.argv, input.env);
  if (loaded.action !== 'parsed') return loaded;
  const resolved = resolveSettings(loaded.settings, input);
  if (loaded.printConfig) return { action: 'print-config', text: loader.printConfig(resolved) };
  return { action: 'run', config: schedulerConfig(resolved) };
}

/** Each sweeping kind's interval and threshold, read from the settings its spec names. */
function sweepConfigs(s: Resolved): Config['sweeps']['kinds'] {
  const values = s as unknown as Readonly<Record<string, number>>;
  const out: Partial<Record<TaskKind, SweepConfig>> = {};
  for (const kind of KIND_NAMES) {
    const sweep = kindSpec(kind).sweep;
    if (!sweep) continue;
    out[kind] = { intervalSecs: values[sweep.intervalSetting] ?? 0, threshold: values[sweep.thresholdSetting] ?? 0 };
  }
  return out;
}

/** The slots of each pool a kind declares, read from the setting its spec names. */
function poolConfigs(s: Resolved): Config['pools']['own'] {
  const values = s as unknown as Readonly<Record<string, number>>;
  const out: Record<string, number> = {};
  for (const kind of KIND_NAMES) {
    const pool = kindSpec(kind).pool;
    if (pool) out[pool.name] = values[pool.sizeSetting] ?? 0;
  }
  return out;
}

/** TASK_WINDOWS read in TASK_WINDOWS_TZ; both were checked by their own value types. */
function windowsOf(s: Resolved): Config['windows'] {
  const parsed = parseTaskWindows(s.TASK_WINDOWS, s.TASK_WINDOWS_TZ);
  if (!parsed.ok) throw new Error(`TASK_WINDOWS passed its check but not its parse: ${parsed.error}`);
  return { tz: s.TASK_WINDOWS_TZ, list: parsed.windows };
}

/** The scheduler's {@link Config} of its resolved settings (a superset, such as the master's, will do). */
export function schedulerConfig(s: Resolved): Config {
  const cooldown: CooldownPolicy = {
    afterFailures: s.TASK_COOLDOWN_AFTER_FAILURES,
    baseSecs: s.TASK_COOLDOWN_BASE_SECS,
    maxSecs: s.TASK_COOLDOWN_MAX_SECS,
    jitter: s.TASK_COOLDOWN_JITTER,
    kinds: s.TASK_COOLDOWN_KINDS,
    maxPercent: s.TASK_COOLDOWN_MAX_PERCENT,
    countInfrastructure: s.TASK_COOLDOWN_COUNT_INFRA,
  };
  return {
    masterId: s.MASTER_ID,
    etcd: { ...etcdConfig(s), leaseTtlSecs: s.ETCD_LEASE_TTL_SECS },
    workers: {
      endpoints: s.WORKER_ENDPOINTS,
      token: s.WORKER_TOKEN,
      timeoutSecs: s.WORKER_TIMEOUT_SECS,
    },
    intervals: { statsScanSecs: s.STATS_SCAN_INTERVAL_SECS },
    sweeps: { maxNewTasks: s.SWEEP_MAX_NEW_TASKS, kinds: sweepConfigs(s) },
    pools: {
      taskConcurrency: s.TASK_CONCURRENCY,
      own: poolConfigs(s),
    },
    tasks: {
      maxAttempts: s.TASK_MAX_ATTEMPTS,
      historyLimit: s.TASK_HISTORY_LIMIT,
      historyTtlSecs: s.TASK_HISTORY_TTL_SECS,
      timelineLimit: s.TASK_TIMELINE_LIMIT,
      timelineTtlSecs: s.TASK_TIMELINE_TTL_SECS,
    },
    audit: { limit: s.AUDIT_LIMIT, ttlSecs: s.AUDIT_TTL_SECS },
    cooldown,
    windows: windowsOf(s),
    shutdownGraceSecs: s.SHUTDOWN_GRACE_SECS,
    logLevel: s.LOG_LEVEL,
    logFormat: s.LOG_FORMAT,
  };
}
