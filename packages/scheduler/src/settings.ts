/**
 * The master's settings (docs/ARCHITECTURE.md §3.1): parsing argv and an env map into a {@link Config}. The
 * binary's `env.ts` is the only reader of `process.env`; it hands the map in here.
 *
 * One zod schema, {@link SettingsSchema}, is the source of truth for every setting: each field
 * is keyed by its env var, carries its default (applied by the schema itself) and is registered
 * with its description and secrecy. Flags, `--help`, `--print-config` and error messages are all
 * derived from it, so a setting cannot exist in one place and be missing from another.
 */
import {
  type CooldownPolicy,
  DEFAULT_COOLDOWN_POLICY,
  DEFAULT_PREFIX,
  DEFAULT_STORE_OPTIONS,
  MIN_SESSION_TTL_SECS,
  type TaskKind,
} from '@maintd/core';
import {
  type SettingDescriptor as Descriptor,
  type LoadResult as SettingsLoadResult,
  type ValueType,
  bool,
  checkEtcdSettings,
  decimal,
  etcdConfig,
  etcdSettings,
  fail,
  logSettings,
  checkServerTlsSettings,
  oneOf,
  optional,
  serverTlsConfig,
  serverTlsSettings,
  setting,
  settingsLoader,
  text,
  timerSecs,
  urlList,
  wholeNumber,
  word,
} from '@maintd/settings';
import { z } from 'zod';
import type { Config, SweepConfig } from './config.js';
import { type KINDS, KIND_NAMES, kindSpec } from './kinds/index.js';

/** MASTER_API_READS: whether API reads need a token (docs/ARCHITECTURE.md §3.4). */
const API_READS = ['open', 'token'] as const;

// ---- value types of the master's own --------------------------------------------------------

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

const shape = {
  MASTER_HOST: setting(word('host', 'an address'), '0.0.0.0', {
    description: 'Address the HTTP API listens on.',
  }),
  MASTER_PORT: setting(wholeNumber(1, 65535, 'port'), '8090', {
    description: 'Port the HTTP API listens on.',
  }),
  MASTER_ID: optional(word('id', 'an id', { forbid: /\//, why: 'without "/" (it is part of an etcd key)' }), {
    description: "This master's identity in etcd; must be unique among the masters sharing ETCD_PREFIX.",
    defaultText: '<hostname>-<pid>-<random>',
  }),
  MASTER_API_TOKEN: optional(word('token', 'a token'), {
    description: 'Bearer token required for mutating API calls; unset = only loopback clients may mutate.',
    secret: true,
  }),
  MASTER_API_TOKENS_FILE: optional(text('path'), {
    description:
      'File of named API tokens, one `<name> <read|operate> sha256:<hex>` a line (mode 600); re-read when it changes. Beside MASTER_API_TOKEN, which is the operate token `default`.',
  }),
  MASTER_API_READS: setting(oneOf(API_READS, 'mode'), 'open', {
    description:
      'open: reads need no token; token: every API read needs a read or operate token (/healthz, /readyz and /metrics stay open).',
  }),
  ...serverTlsSettings('MASTER', 'the HTTP API'),
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
  SHUTDOWN_GRACE_SECS: setting(timerSecs(0), '30', {
    description: 'How long running tasks may finish after SIGTERM/SIGINT before the session is released.',
  }),
  ...logSettings(),
};

/** Env var name of a setting, e.g. `MASTER_PORT`. */
export type EnvName = keyof typeof shape;

/**
 * The schema of every master setting, keyed by env var name (docs/ARCHITECTURE.md §3.1, §2.7). Input: raw
 * strings, absent when unset. Output: typed values with defaults applied.
 */
export const SettingsSchema = z.object(shape).superRefine(
  (s, ctx) => {
    checkEtcdSettings(s, ctx);
    checkServerTlsSettings('MASTER', s, ctx);
    // etcd settings with no etcd mean a forgotten ETCD_ENDPOINTS, not a wish for the embedded store.
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
    // Every read would be refused: no token could ever be presented.
    if (s.MASTER_API_READS === 'token' && s.MASTER_API_TOKEN === undefined && s.MASTER_API_TOKENS_FILE === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['MASTER_API_READS'],
        message: 'token needs MASTER_API_TOKEN or MASTER_API_TOKENS_FILE (else no read could be made)',
      });
    }
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
  },
  // Run even when a field failed, so one run reports every problem.
  { when: () => true },
);

/** Parsed settings, keyed by env var name. */
export type Settings = z.output<typeof SettingsSchema>;

/** One setting, as `--help`, `--print-config`, tests and docs see it. */
export type SettingDescriptor = Descriptor<EnvName>;

const loader = settingsLoader({
  program: 'maintd',
  usage: ['[options]'],
  about: [
    'The maintd master: stats scans, maintenance sweeps, worker fan-out, failure cooldowns and',
    'the HTTP API. Every setting is a flag and an environment variable; a flag overrides the',
    'variable, and an empty value counts as unset (the default applies).',
  ],
  shape,
  schema: SettingsSchema,
  emptyDefaultText: 'empty',
});

/** Every setting, in schema order. */
export const settings: readonly SettingDescriptor[] = loader.settings;

// ---- loading -----------------------------------------------------------------------------------

/** Everything {@link loadConfig} reads; passed in so parsing stays pure. */
export interface LoadConfigInput {
  /** Arguments after the script, i.e. `process.argv.slice(2)`. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly hostname: string;
  readonly pid: number;
  /** Random suffix of the default MASTER_ID. */
  readonly random: () => string;
}

/** What startup should do. Bad input is a result, not an exception. */
export type LoadResult = SettingsLoadResult<Config>;

/**
 * Parses argv and env into a {@link Config}. Precedence: flag > env var > default; an empty
 * value (env or `--flag=`) counts as unset. `--help`/`-h` wins over everything else, then
 * `--version`/`-V`.
 */
export function loadConfig(input: LoadConfigInput): LoadResult {
  const loaded = loader.load(input.argv, input.env);
  if (loaded.action !== 'parsed') return loaded;
  const parsed = loaded.settings;
  const resolved: Resolved = {
    ...parsed,
    MASTER_ID: parsed.MASTER_ID ?? `${input.hostname}-${input.pid}-${input.random()}`,
  };
  if (loaded.printConfig) return { action: 'print-config', text: loader.printConfig(resolved) };
  return { action: 'run', config: toConfig(resolved) };
}

/** Settings with the computed defaults filled in. */
type Resolved = Omit<Settings, 'MASTER_ID'> & { readonly MASTER_ID: string };

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

function toConfig(s: Resolved): Config {
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
    host: s.MASTER_HOST,
    port: s.MASTER_PORT,
    masterId: s.MASTER_ID,
    apiToken: s.MASTER_API_TOKEN,
    apiTokensFile: s.MASTER_API_TOKENS_FILE,
    apiReads: s.MASTER_API_READS,
    tls: serverTlsConfig('MASTER', s),
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
    shutdownGraceSecs: s.SHUTDOWN_GRACE_SECS,
    logLevel: s.LOG_LEVEL,
    logFormat: s.LOG_FORMAT,
  };
}
