/**
 * The master's configuration edge (DESIGN §3.1). This is the only module that reads
 * `process.env`; everything else receives a parsed {@link Config}.
 *
 * One zod schema, {@link SettingsSchema}, is the source of truth for every setting: each field
 * is keyed by its env var, carries its default (applied by the schema itself) and is registered
 * with its description and secrecy. Flags, `--help`, `--print-config` and error messages are all
 * derived from it, so a setting cannot exist in one place and be missing from another.
 */
import { parseArgs } from 'node:util';
import { type CooldownPolicy, MIN_SESSION_TTL_SECS, TASK_KINDS, type TaskKind } from '@maintd/core';
import { z } from 'zod';
import { type Config, LOG_LEVELS, type LogLevel } from './config.js';

/** Longest duration a Node timer can wait; above it `setTimeout` fires after 1 ms instead. */
const MAX_TIMER_SECS = Math.floor((2 ** 31 - 1) / 1000);

/** What the schema registers about each setting, beyond its parser. */
interface SettingMeta {
  readonly description: string;
  /** Raw value the schema substitutes when the setting is unset; undefined = stays unset. */
  readonly default: string | undefined;
  /** How `--help` shows a default the schema cannot know (computed at startup). */
  readonly defaultText?: string;
  readonly secret: boolean;
  readonly boolean: boolean;
  /** Placeholder for the value in `--help`, e.g. `secs`. */
  readonly placeholder: string;
}

const registry = z.registry<SettingMeta>();

/** A string parser plus the placeholder `--help` shows for its values. */
interface ValueType<T> {
  readonly schema: z.ZodType<T, string>;
  readonly placeholder: string;
  readonly boolean?: boolean;
}

interface SettingOptions {
  readonly description: string;
  readonly secret?: boolean;
  readonly placeholder?: string;
}

/** A setting that always has a value: unset means `default`, parsed like any other input. */
function setting<T>(type: ValueType<T>, defaultValue: string, o: SettingOptions) {
  // prefault (not default) runs the default through the parser, so defaults obey the same rules.
  return type.schema.prefault(defaultValue).register(registry, meta(type, defaultValue, o));
}

/** A setting whose absence is meaningful (no token, no TLS, …). */
function optional<T>(type: ValueType<T>, o: SettingOptions & { readonly defaultText?: string }) {
  return type.schema.optional().register(registry, meta(type, undefined, o));
}

function meta(
  type: ValueType<unknown>,
  defaultValue: string | undefined,
  o: SettingOptions & { readonly defaultText?: string },
): SettingMeta {
  return {
    description: o.description,
    default: defaultValue,
    ...(o.defaultText === undefined ? {} : { defaultText: o.defaultText }),
    secret: o.secret ?? false,
    boolean: type.boolean ?? false,
    placeholder: o.placeholder ?? type.placeholder,
  };
}

/** Issue params: `got` overrides the value echoed in the error; null echoes nothing. */
interface IssueParams {
  readonly got?: string | null;
}

function fail(ctx: z.RefinementCtx, message: string, params?: IssueParams): typeof z.NEVER {
  ctx.addIssue({ code: 'custom', message, ...(params ? { params } : {}) });
  return z.NEVER;
}

// ---- value types -------------------------------------------------------------------------------

/** Whole numbers only: `1.5`, `1e3`, `-1` and `0x10` are rejected rather than coerced. */
function wholeNumber(min: number, max: number = Number.MAX_SAFE_INTEGER, placeholder = 'n'): ValueType<number> {
  const expected =
    max === Number.MAX_SAFE_INTEGER
      ? `expected a whole number of at least ${min}`
      : `expected a whole number from ${min} to ${max}`;
  return {
    placeholder,
    schema: z.string().transform((raw, ctx) => {
      const s = raw.trim();
      const n = /^[0-9]+$/.test(s) ? Number(s) : Number.NaN;
      return n >= min && n <= max ? n : fail(ctx, expected);
    }),
  };
}

/** Seconds that end up in a Node timer, so capped where timers stop working. */
function timerSecs(min: number): ValueType<number> {
  return wholeNumber(min, MAX_TIMER_SECS, 'secs');
}

/** A plain decimal in [min, max] or [min, max); no exponents, no signs. */
function decimal(min: number, max: number, maxExclusive: boolean, placeholder: string): ValueType<number> {
  const expected = maxExclusive
    ? `expected a number from ${min} up to but not including ${max}`
    : `expected a number from ${min} to ${max}`;
  return {
    placeholder,
    schema: z.string().transform((raw, ctx) => {
      const s = raw.trim();
      const n = /^([0-9]+(\.[0-9]*)?|\.[0-9]+)$/.test(s) ? Number(s) : Number.NaN;
      return n >= min && (maxExclusive ? n < max : n <= max) ? n : fail(ctx, expected);
    }),
  };
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

const bool: ValueType<boolean> = {
  placeholder: 'bool',
  boolean: true,
  schema: z.string().transform((raw, ctx) => {
    const s = raw.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
    return fail(ctx, 'expected true or false');
  }),
};

/** A non-empty string used verbatim (file paths, passwords, user names). */
function text(placeholder: string): ValueType<string> {
  return { placeholder, schema: z.string() };
}

/** A single token-like word: no whitespace or control characters, which would corrupt a key or header. */
function word(
  placeholder: string,
  what: string,
  extra?: { readonly forbid: RegExp; readonly why: string },
): ValueType<string> {
  return {
    placeholder,
    schema: z.string().transform((s, ctx) => {
      // eslint-disable-next-line no-control-regex -- control characters are exactly what is rejected
      if (/[\s\u0000-\u001f\u007f]/.test(s))
        return fail(ctx, `expected ${what} without whitespace or control characters`);
      if (extra && extra.forbid.test(s)) return fail(ctx, `expected ${what} ${extra.why}`);
      return s;
    }),
  };
}

const logLevel: ValueType<LogLevel> = {
  placeholder: 'level',
  schema: z.string().transform((raw, ctx) => {
    const s = raw.trim().toLowerCase();
    return (LOG_LEVELS as readonly string[]).includes(s)
      ? (s as LogLevel)
      : fail(ctx, `expected one of ${LOG_LEVELS.join(', ')}`);
  }),
};

const taskKinds: ValueType<readonly TaskKind[]> = {
  placeholder: 'kinds',
  schema: z.string().transform((raw, ctx) => {
    const expected = `expected "all" or a comma-separated list of ${TASK_KINDS.join(', ')}`;
    const items = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (items.length === 1 && items[0] === 'all') return TASK_KINDS;
    const unknown = items.find((s) => !(TASK_KINDS as readonly string[]).includes(s));
    if (unknown !== undefined) return fail(ctx, expected, { got: unknown });
    if (items.length === 0) return fail(ctx, expected);
    // Schema order, not input order, so equal settings compare and print equal.
    return TASK_KINDS.filter((k) => items.includes(k));
  }),
};

/**
 * Comma-separated http(s) base URLs; blanks between commas are ignored, trailing slashes
 * trimmed so callers can append `/api/...`.
 */
function urlList(o: { readonly allowPath: boolean }): ValueType<readonly string[]> {
  const expected = o.allowPath
    ? 'expected comma-separated http(s) URLs'
    : 'expected comma-separated http(s)://host:port URLs';
  return {
    placeholder: 'url,...',
    schema: z.string().transform((raw, ctx) => {
      const out: string[] = [];
      const seen = new Set<string>();
      for (const item of raw.split(',').map((s) => s.trim())) {
        if (item === '') continue;
        // Only the offending item is echoed, and none that may hold user:password@: the rest of
        // the list may carry credentials.
        const got = item.includes('@') ? null : item;
        let url: URL;
        try {
          url = new URL(item);
        } catch {
          return fail(ctx, expected, { got });
        }
        if (url.username !== '' || url.password !== '') {
          return fail(ctx, `${expected} without user:password@ (credentials have their own settings)`, { got: null });
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(ctx, expected, { got });
        if (url.search !== '' || url.hash !== '' || item.includes('?') || item.includes('#')) {
          return fail(ctx, `${expected} without a query or fragment`, { got });
        }
        if (!o.allowPath && url.pathname !== '/') return fail(ctx, `${expected} without a path`, { got });
        const key = url.href.replace(/\/+$/, '');
        if (seen.has(key)) return fail(ctx, `${expected}, each listed once; this one is listed twice`, { got });
        seen.add(key);
        out.push(item.replace(/\/+$/, ''));
      }
      return out;
    }),
  };
}

// ---- the schema --------------------------------------------------------------------------------

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
  ETCD_ENDPOINTS: setting(urlList({ allowPath: false }), '', {
    description: 'etcd endpoints; empty = embedded in-memory store (single master, not durable).',
  }),
  ETCD_PREFIX: setting(word('prefix', 'a key prefix'), '/maintd', {
    description: 'Key prefix under which all maintd state lives in etcd.',
  }),
  ETCD_USERNAME: optional(text('user'), {
    description: 'etcd user name; set together with ETCD_PASSWORD.',
  }),
  ETCD_PASSWORD: optional(text('password'), {
    description: 'etcd password; set together with ETCD_USERNAME.',
    secret: true,
  }),
  ETCD_CA_CERT: optional(text('path'), {
    description: 'PEM file of the CA that signed the etcd server certificates; enables TLS.',
  }),
  ETCD_CLIENT_CERT: optional(text('path'), {
    description: 'PEM file of the client certificate for etcd; needs ETCD_CLIENT_KEY and ETCD_CA_CERT.',
  }),
  ETCD_CLIENT_KEY: optional(text('path'), {
    description: 'PEM file of the client private key for etcd; needs ETCD_CLIENT_CERT.',
  }),
  ETCD_LEASE_TTL_SECS: setting(timerSecs(MIN_SESSION_TTL_SECS), '30', {
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
  MERGE_WAL_INTERVAL_SECS: setting(timerSecs(0), '600', {
    description: 'How often the merge-wal sweep runs; 0 disables automatic merges.',
  }),
  MERGE_WAL_MIN_GENERATIONS: setting(wholeNumber(1), '8', {
    description: 'Pending WAL generations at which the sweep enqueues a merge.',
  }),
  COMPACTION_INTERVAL_SECS: setting(timerSecs(0), '600', {
    description: 'How often the compaction sweep runs; 0 disables automatic compaction.',
  }),
  MIN_FRAGMENTS: setting(wholeNumber(1), '16', {
    description: 'Fragments at which the sweep enqueues a compaction.',
  }),
  SWEEP_MAX_NEW_TASKS: setting(wholeNumber(1), '256', {
    description: 'Most tasks one sweep enqueues.',
  }),
  TASK_CONCURRENCY: setting(wholeNumber(1), '4', {
    description: 'Slots of the general pool (compactions; every kind when MERGE_WAL_CONCURRENCY is 0).',
  }),
  MERGE_WAL_CONCURRENCY: setting(wholeNumber(0), '4', {
    description: 'Slots of the merge-wal pool; 0 = no separate pool, the general pool claims every kind.',
  }),
  TASK_MAX_ATTEMPTS: setting(wholeNumber(1), '5', {
    description: 'Attempts before a task is given up as failed.',
  }),
  TASK_HISTORY_LIMIT: setting(wholeNumber(1), '1000', {
    description: 'Finished tasks kept in history.',
  }),
  TASK_HISTORY_TTL_SECS: setting(wholeNumber(0, Number.MAX_SAFE_INTEGER, 'secs'), '86400', {
    description: 'Age at which finished tasks leave history; 0 = only TASK_HISTORY_LIMIT applies.',
  }),
  TASK_COOLDOWN_AFTER_FAILURES: setting(wholeNumber(0), '3', {
    description: 'Consecutive failures of a (kind, store) before sweeps skip it for a window; 0 disables cooldowns.',
  }),
  TASK_COOLDOWN_BASE_SECS: setting(wholeNumber(1, Number.MAX_SAFE_INTEGER, 'secs'), '600', {
    description: 'First cooldown window; it doubles with every further failure.',
  }),
  TASK_COOLDOWN_MAX_SECS: setting(wholeNumber(1, Number.MAX_SAFE_INTEGER, 'secs'), '21600', {
    description:
      'Longest cooldown window, and how long a failure count is remembered; at least TASK_COOLDOWN_BASE_SECS.',
  }),
  TASK_COOLDOWN_JITTER: setting(decimal(0, 1, true, 'fraction'), '0.1', {
    description:
      'Fraction by which a window is shortened at most, so cooled stores do not return in lockstep; in [0, 1).',
  }),
  TASK_COOLDOWN_KINDS: setting(taskKinds, 'all', {
    description: `Task kinds cooldowns apply to: all, or a comma-separated list of ${TASK_KINDS.join(', ')}.`,
  }),
  TASK_COOLDOWN_MAX_PERCENT: setting(decimal(0, 100, false, 'percent'), '25', {
    description:
      "Open no new window while more than this percentage of a kind's stores are cooling (the fleet is failing).",
  }),
  TASK_COOLDOWN_COUNT_INFRA: setting(bool, 'false', {
    description: 'Count infrastructure failures (no worker answered) toward cooldowns, not only store failures.',
  }),
  SHUTDOWN_GRACE_SECS: setting(timerSecs(0), '30', {
    description: 'How long running tasks may finish after SIGTERM/SIGINT before the session is released.',
  }),
  LOG_LEVEL: setting(logLevel, 'info', {
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
  }),
};

/** Env var name of a setting, e.g. `MASTER_PORT`. */
export type EnvName = keyof typeof shape;

/**
 * The schema of every master setting, keyed by env var name (DESIGN §3.1, §2.7). Input: raw
 * strings, absent when unset. Output: typed values with defaults applied.
 */
export const SettingsSchema = z.object(shape).superRefine(
  (s, ctx) => {
    const pair = (a: EnvName, b: EnvName, why: string): void => {
      if ((s[a] === undefined) !== (s[b] === undefined)) {
        const [set, unset] = s[a] === undefined ? [b, a] : [a, b];
        ctx.addIssue({
          code: 'custom',
          path: [unset],
          message: `required because ${set} is set (${why})`,
          params: { got: null },
        });
      }
    };
    pair('ETCD_USERNAME', 'ETCD_PASSWORD', 'set both or neither');
    pair('ETCD_CLIENT_CERT', 'ETCD_CLIENT_KEY', 'set both or neither');
    if (s.ETCD_CLIENT_CERT !== undefined && s.ETCD_CA_CERT === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['ETCD_CA_CERT'],
        message: 'required because ETCD_CLIENT_CERT is set (a client certificate needs the CA)',
        params: { got: null },
      });
    }
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
export interface SettingDescriptor {
  /** Environment variable, e.g. `MASTER_PORT`. */
  readonly env: EnvName;
  /** Flag, e.g. `--master-port`. */
  readonly flag: string;
  /** Raw value used when unset (`''` = empty list); undefined = stays unset or is computed. */
  readonly default: string | undefined;
  /** The default as `--help` shows it; never empty. */
  readonly defaultText: string;
  /** Whether the value is redacted from `--print-config` and error messages. */
  readonly secret: boolean;
  /** Whether `--flag` alone means true (and `--flag=false` false). */
  readonly boolean: boolean;
  /** Placeholder for the value in `--help`. */
  readonly placeholder: string;
  /** One line for `--help`. */
  readonly description: string;
}

/** `MASTER_PORT` → `--master-port`. */
function flagOf(env: string): string {
  return `--${env.toLowerCase().replaceAll('_', '-')}`;
}

/** Every setting, in schema order. */
export const settings: readonly SettingDescriptor[] = Object.freeze(
  (Object.keys(shape) as EnvName[]).map((env): SettingDescriptor => {
    const m = registry.get(shape[env]);
    if (!m) throw new Error(`setting ${env} is not registered`);
    return Object.freeze({
      env,
      flag: flagOf(env),
      default: m.default,
      defaultText: m.defaultText ?? (m.default === undefined ? 'unset' : m.default === '' ? 'empty' : m.default),
      secret: m.secret,
      boolean: m.boolean,
      placeholder: m.placeholder,
      description: m.description,
    });
  }),
);

const byEnv = new Map<string, SettingDescriptor>(settings.map((s) => [s.env, s]));
const byFlagName = new Map<string, SettingDescriptor>(settings.map((s) => [s.flag.slice(2), s]));

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
export type LoadResult =
  | { readonly action: 'run'; readonly config: Config }
  | { readonly action: 'help'; readonly text: string }
  | { readonly action: 'print-config'; readonly text: string }
  | { readonly action: 'error'; readonly message: string };

/** The one read of the process environment in the master. */
export function readProcessEnv(): Readonly<Record<string, string | undefined>> {
  return process.env;
}

/**
 * Parses argv and env into a {@link Config}. Precedence: flag > env var > default; an empty
 * value (env or `--flag=`) counts as unset. `--help`/`-h` wins over everything else.
 */
export function loadConfig(input: LoadConfigInput): LoadResult {
  const args = readArgs(input.argv);
  if (args.help) return { action: 'help', text: helpText() };

  const raw: Partial<Record<EnvName, string>> = {};
  for (const s of settings) {
    const v = args.values.has(s.env) ? args.values.get(s.env) : input.env[s.env];
    if (v !== undefined && v !== '') raw[s.env] = v;
  }

  const errors = [...args.errors];
  const parsed = SettingsSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) errors.push(describeIssue(issue, raw));
  }
  if (!parsed.success || errors.length > 0) return { action: 'error', message: errors.join('\n') };

  const resolved: Resolved = {
    ...parsed.data,
    MASTER_ID: parsed.data.MASTER_ID ?? `${input.hostname}-${input.pid}-${input.random()}`,
  };
  if (args.printConfig) return { action: 'print-config', text: printConfig(resolved) };
  return { action: 'run', config: toConfig(resolved) };
}

/** Settings with the computed defaults filled in. */
type Resolved = Omit<Settings, 'MASTER_ID'> & { readonly MASTER_ID: string };

interface Args {
  readonly help: boolean;
  readonly printConfig: boolean;
  /** Flag values by env name; '' = given empty (resets to the default). */
  readonly values: ReadonlyMap<string, string>;
  readonly errors: readonly string[];
}

function readArgs(argv: readonly string[]): Args {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
    'print-config': { type: 'boolean' },
  };
  for (const [name, s] of byFlagName) options[name] = { type: s.boolean ? 'boolean' : 'string' };
  // Non-strict with tokens: strict mode cannot express `--bool=false`, and its messages do not
  // name our settings. Every token is checked below instead.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });

  let help = false;
  let printConfig = false;
  const values = new Map<string, string>();
  const errors: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') {
      // Not echoed: after a misspelled flag it is that flag's value, perhaps a secret.
      errors.push(`unexpected argument #${t.index + 1} (maintd takes flags only; see --help)`);
      continue;
    }
    if (t.kind === 'option-terminator') continue;
    if (t.name === 'help' || t.name === 'print-config') {
      if (t.value !== undefined) errors.push(`${t.rawName} takes no value`);
      else if (t.name === 'help') help = true;
      else printConfig = true;
      continue;
    }
    const s = byFlagName.get(t.name);
    if (!s || !t.rawName.startsWith('--')) {
      errors.push(`unknown flag ${t.rawName} (see --help)`);
      continue;
    }
    if (s.boolean) {
      values.set(s.env, t.value ?? 'true');
    } else if (t.value === undefined || (!t.inlineValue && t.value.startsWith('-'))) {
      // `--a --b` would otherwise take "--b" as the value of --a.
      errors.push(`${s.flag} (${s.env}) needs a value; write ${s.flag}=VALUE for a value starting with "-"`);
    } else {
      values.set(s.env, t.value);
    }
  }
  return { help, printConfig, values, errors };
}

function describeIssue(issue: z.core.$ZodIssue, raw: Partial<Record<EnvName, string>>): string {
  const key = issue.path[0];
  const s = typeof key === 'string' ? byEnv.get(key) : undefined;
  if (!s) return `invalid configuration: ${issue.message}`;
  const params = (issue.code === 'custom' ? issue.params : undefined) as IssueParams | undefined;
  const value = raw[s.env];
  // A secret's value is never echoed, not even when it is the part that is wrong.
  const got = s.secret || params?.got === null ? undefined : (params?.got ?? value);
  const suffix = got === undefined ? '' : `, got ${JSON.stringify(got)}`;
  return `invalid ${s.env} (${s.flag}): ${issue.message}${suffix}`;
}

function formatValue(s: SettingDescriptor, value: Resolved[EnvName]): string {
  if (value === undefined) return '';
  if (s.secret) return '<redacted>';
  const text = typeof value === 'object' ? value.join(',') : String(value);
  // Quote what would not survive as one KEY=value line in an env file.
  return /[\s"'\\#]/.test(text) ? JSON.stringify(text) : text;
}

function printConfig(resolved: Resolved): string {
  return settings.map((s) => `${s.env}=${formatValue(s, resolved[s.env])}`).join('\n') + '\n';
}

function helpText(): string {
  const lines = [
    'Usage: maintd [flags]',
    '',
    'The maintd master: stats scans, maintenance sweeps, worker fan-out, failure cooldowns and',
    'the HTTP API. Every setting is a flag and an environment variable; a flag overrides the',
    'variable, and an empty value counts as unset (the default applies).',
    '',
    'Flags:',
    '  -h, --help',
    '      Show this help and exit.',
    '  --print-config',
    '      Print the effective configuration as KEY=value lines (secrets redacted) and exit.',
    '',
    'Settings:',
  ];
  for (const s of settings) {
    const flag = s.boolean ? `${s.flag}[=false]` : `${s.flag}=<${s.placeholder}>`;
    const tags = [`env ${s.env}`, `default: ${s.defaultText}`, ...(s.secret ? ['secret'] : [])];
    lines.push(`  ${flag}  (${tags.join('; ')})`, `      ${s.description}`);
  }
  return lines.join('\n') + '\n';
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
    etcd: {
      endpoints: s.ETCD_ENDPOINTS,
      prefix: s.ETCD_PREFIX,
      username: s.ETCD_USERNAME,
      password: s.ETCD_PASSWORD,
      caCert: s.ETCD_CA_CERT,
      clientCert: s.ETCD_CLIENT_CERT,
      clientKey: s.ETCD_CLIENT_KEY,
      leaseTtlSecs: s.ETCD_LEASE_TTL_SECS,
    },
    workers: {
      endpoints: s.WORKER_ENDPOINTS,
      token: s.WORKER_TOKEN,
      timeoutSecs: s.WORKER_TIMEOUT_SECS,
    },
    intervals: {
      statsScanSecs: s.STATS_SCAN_INTERVAL_SECS,
      mergeWalSecs: s.MERGE_WAL_INTERVAL_SECS,
      compactionSecs: s.COMPACTION_INTERVAL_SECS,
    },
    sweeps: {
      mergeWalMinGenerations: s.MERGE_WAL_MIN_GENERATIONS,
      minFragments: s.MIN_FRAGMENTS,
      maxNewTasks: s.SWEEP_MAX_NEW_TASKS,
    },
    pools: {
      taskConcurrency: s.TASK_CONCURRENCY,
      mergeWalConcurrency: s.MERGE_WAL_CONCURRENCY,
    },
    tasks: {
      maxAttempts: s.TASK_MAX_ATTEMPTS,
      historyLimit: s.TASK_HISTORY_LIMIT,
      historyTtlSecs: s.TASK_HISTORY_TTL_SECS,
    },
    cooldown,
    shutdownGraceSecs: s.SHUTDOWN_GRACE_SECS,
    logLevel: s.LOG_LEVEL,
  };
}
