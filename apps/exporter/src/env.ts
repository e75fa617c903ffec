/**
 * The exporter's configuration edge, in the master's style (DESIGN §3.1): this is the only module
 * that reads `process.env`; everything else receives a parsed {@link ExporterConfig}.
 *
 * One zod schema, {@link SettingsSchema}, is the source of truth for every setting: each field is
 * keyed by its env var, carries its default and is registered with its description and secrecy.
 * Flags, `--help`, `--print-config` and error messages are derived from it. The etcd settings
 * have the master's names, so one environment file can serve both.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { type ExporterConfig, LOG_LEVELS, type LogLevel } from './config.js';

/** Longest duration a Node timer can wait; above it `setTimeout` fires after 1 ms instead. */
const MAX_TIMER_SECS = Math.floor((2 ** 31 - 1) / 1000);

/** What the schema registers about each setting, beyond its parser. */
interface SettingMeta {
  readonly description: string;
  /** Raw value the schema substitutes when the setting is unset; undefined = stays unset. */
  readonly default: string | undefined;
  readonly secret: boolean;
  /** Placeholder for the value in `--help`, e.g. `secs`. */
  readonly placeholder: string;
  /** Short flags accepted besides the derived one (the issue's `--prefix`, `--port`). */
  readonly aliases: readonly string[];
}

const registry = z.registry<SettingMeta>();

/** A string parser plus the placeholder `--help` shows for its values. */
interface ValueType<T> {
  readonly schema: z.ZodType<T, string>;
  readonly placeholder: string;
}

interface SettingOptions {
  readonly description: string;
  readonly secret?: boolean;
  readonly aliases?: readonly string[];
}

/** A setting that always has a value: unset means `default`, parsed like any other input. */
function setting<T>(type: ValueType<T>, defaultValue: string, o: SettingOptions) {
  // prefault (not default) runs the default through the parser, so defaults obey the same rules.
  return type.schema.prefault(defaultValue).register(registry, meta(type, defaultValue, o));
}

/** A setting whose absence is meaningful (no auth, no TLS). */
function optional<T>(type: ValueType<T>, o: SettingOptions) {
  return type.schema.optional().register(registry, meta(type, undefined, o));
}

function meta(type: ValueType<unknown>, defaultValue: string | undefined, o: SettingOptions): SettingMeta {
  return {
    description: o.description,
    default: defaultValue,
    secret: o.secret ?? false,
    placeholder: type.placeholder,
    aliases: o.aliases ?? [],
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
function wholeNumber(min: number, max: number, placeholder: string): ValueType<number> {
  return {
    placeholder,
    schema: z.string().transform((raw, ctx) => {
      const s = raw.trim();
      const n = /^[0-9]+$/.test(s) ? Number(s) : Number.NaN;
      return n >= min && n <= max ? n : fail(ctx, `expected a whole number from ${min} to ${max}`);
    }),
  };
}

/** A string used verbatim (file paths, passwords, user names). */
function text(placeholder: string): ValueType<string> {
  return { placeholder, schema: z.string() };
}

/** A single token-like word: whitespace or control characters would corrupt a key prefix or address. */
function word(placeholder: string, what: string): ValueType<string> {
  return {
    placeholder,
    schema: z.string().transform((s, ctx) => {
      // eslint-disable-next-line no-control-regex -- control characters are exactly what is rejected
      if (/[\s\u0000-\u001f\u007f]/.test(s))
        return fail(ctx, `expected ${what} without whitespace or control characters`);
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

/** Comma-separated http(s)://host:port URLs, at least one; blanks between commas are ignored. */
const etcdEndpoints: ValueType<readonly string[]> = {
  placeholder: 'url,...',
  schema: z.string().transform((raw, ctx) => {
    const expected = 'expected comma-separated http(s)://host:port URLs';
    const out: string[] = [];
    const seen = new Set<string>();
    for (const item of raw.split(',').map((s) => s.trim())) {
      if (item === '') continue;
      // Only the offending item is echoed, and none that may hold user:password@.
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
      if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || /[?#]/.test(item)) {
        return fail(ctx, `${expected} without a path, query or fragment`, { got });
      }
      const key = url.href.replace(/\/+$/, '');
      if (seen.has(key)) return fail(ctx, `${expected}, each listed once; this one is listed twice`, { got });
      seen.add(key);
      out.push(item.replace(/\/+$/, ''));
    }
    // Unlike the master, there is no embedded store: an exporter without etcd has nothing to export.
    return out.length > 0 ? out : fail(ctx, 'required: the exporter reads the fleet state from etcd');
  }),
};

// ---- the schema --------------------------------------------------------------------------------

const shape = {
  ETCD_ENDPOINTS: setting(etcdEndpoints, '', {
    description: 'etcd endpoints of the fleet (required).',
  }),
  ETCD_PREFIX: setting(word('prefix', 'a key prefix'), '/maintd', {
    description: 'Key prefix the masters share (their ETCD_PREFIX).',
    aliases: ['--prefix'],
  }),
  ETCD_USERNAME: optional(text('user'), {
    description: 'etcd user name; set together with ETCD_PASSWORD. Read access to the prefix suffices.',
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
  EXPORTER_HOST: setting(word('host', 'an address'), '0.0.0.0', {
    description: 'Address the metrics endpoint listens on.',
    aliases: ['--host'],
  }),
  EXPORTER_PORT: setting(wholeNumber(1, 65535, 'port'), '9464', {
    description: 'Port the metrics endpoint listens on.',
    aliases: ['--port'],
  }),
  EXPORTER_CHECK_INTERVAL_SECS: setting(wholeNumber(1, MAX_TIMER_SECS, 'secs'), '5', {
    description:
      'How often etcd is checked while the watch is quiet; maintd_exporter_up drops to 0 within about this long of an outage.',
  }),
  LOG_LEVEL: setting(logLevel, 'info', {
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
  }),
};

/** Env var name of a setting, e.g. `EXPORTER_PORT`. */
export type EnvName = keyof typeof shape;

/**
 * The schema of every exporter setting, keyed by env var name. Input: raw strings, absent when
 * unset. Output: typed values with defaults applied.
 */
export const SettingsSchema = z.object(shape).superRefine(
  (s, ctx) => {
    const pair = (a: EnvName, b: EnvName): void => {
      if ((s[a] === undefined) !== (s[b] === undefined)) {
        const [set, unset] = s[a] === undefined ? [b, a] : [a, b];
        ctx.addIssue({
          code: 'custom',
          path: [unset],
          message: `required because ${set} is set (set both or neither)`,
          params: { got: null },
        });
      }
    };
    pair('ETCD_USERNAME', 'ETCD_PASSWORD');
    pair('ETCD_CLIENT_CERT', 'ETCD_CLIENT_KEY');
    if (s.ETCD_CLIENT_CERT !== undefined && s.ETCD_CA_CERT === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['ETCD_CA_CERT'],
        message: 'required because ETCD_CLIENT_CERT is set (a client certificate needs the CA)',
        params: { got: null },
      });
    }
  },
  // Run even when a field failed, so one run reports every problem.
  { when: () => true },
);

/** Parsed settings, keyed by env var name. */
export type Settings = z.output<typeof SettingsSchema>;

/** One setting, as `--help`, `--print-config` and tests see it. */
export interface SettingDescriptor {
  /** Environment variable, e.g. `EXPORTER_PORT`. */
  readonly env: EnvName;
  /** Flag, e.g. `--exporter-port`. */
  readonly flag: string;
  /** Other accepted flags, e.g. `--port`. */
  readonly aliases: readonly string[];
  /** Raw value used when unset; undefined = stays unset. */
  readonly default: string | undefined;
  /** The default as `--help` shows it; never empty. */
  readonly defaultText: string;
  /** Whether the value is redacted from `--print-config` and error messages. */
  readonly secret: boolean;
  /** Placeholder for the value in `--help`. */
  readonly placeholder: string;
  /** One line for `--help`. */
  readonly description: string;
}

/** `EXPORTER_PORT` → `--exporter-port`. */
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
      aliases: m.aliases,
      default: m.default,
      defaultText: m.default === undefined ? 'unset' : m.default === '' ? 'none' : m.default,
      secret: m.secret,
      placeholder: m.placeholder,
      description: m.description,
    });
  }),
);

const byEnv = new Map<string, SettingDescriptor>(settings.map((s) => [s.env, s]));
const byFlagName = new Map<string, SettingDescriptor>(
  settings.flatMap((s) => [s.flag, ...s.aliases].map((f) => [f.slice(2), s] as const)),
);

// ---- loading -----------------------------------------------------------------------------------

/** Everything {@link loadConfig} reads; passed in so parsing stays pure. */
export interface LoadConfigInput {
  /** Arguments after the script, i.e. `process.argv.slice(2)`. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** What startup should do. Bad input is a result, not an exception. */
export type LoadResult =
  | { readonly action: 'run'; readonly config: ExporterConfig }
  | { readonly action: 'help'; readonly text: string }
  | { readonly action: 'print-config'; readonly text: string }
  | { readonly action: 'error'; readonly message: string };

/** The one read of the process environment in the exporter. */
export function readProcessEnv(): Readonly<Record<string, string | undefined>> {
  return process.env;
}

/**
 * Parses argv and env into an {@link ExporterConfig}. Precedence: flag > env var > default; an
 * empty value (env or `--flag=`) counts as unset. `--help`/`-h` wins over everything else.
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
  if (args.printConfig) return { action: 'print-config', text: printConfig(parsed.data) };
  return { action: 'run', config: toConfig(parsed.data) };
}

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
  for (const name of byFlagName.keys()) options[name] = { type: 'string' };
  // Non-strict with tokens: strict mode's messages do not name our settings. Every token is
  // checked below instead.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });

  let help = false;
  let printConfig = false;
  const values = new Map<string, string>();
  const errors: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') {
      // Not echoed: after a misspelled flag it is that flag's value, perhaps a secret.
      errors.push(`unexpected argument #${t.index + 1} (maintd-exporter takes flags only; see --help)`);
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
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith('-'))) {
      // `--a --b` would otherwise take "--b" as the value of --a.
      errors.push(`${t.rawName} (${s.env}) needs a value; write ${t.rawName}=VALUE for a value starting with "-"`);
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

function formatValue(s: SettingDescriptor, value: Settings[EnvName]): string {
  if (value === undefined) return '';
  if (s.secret) return '<redacted>';
  const text = typeof value === 'object' ? value.join(',') : String(value);
  // Quote what would not survive as one KEY=value line in an env file.
  return /[\s"'\\#]/.test(text) ? JSON.stringify(text) : text;
}

function printConfig(parsed: Settings): string {
  return settings.map((s) => `${s.env}=${formatValue(s, parsed[s.env])}`).join('\n') + '\n';
}

function helpText(): string {
  const lines = [
    'Usage: maintd-exporter --etcd-endpoints <url,...> [--prefix /maintd] [--port 9464] [flags]',
    '',
    'Cluster-wide Prometheus metrics of a maintd fleet: one etcd range read, then a watch, with',
    'the aggregates kept in memory so a scrape never waits on etcd. Every setting is a flag and an',
    'environment variable; a flag overrides the variable, and an empty value counts as unset.',
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
    const flags = [s.flag, ...s.aliases].map((f) => `${f}=<${s.placeholder}>`).join(', ');
    const tags = [`env ${s.env}`, `default: ${s.defaultText}`, ...(s.secret ? ['secret'] : [])];
    lines.push(`  ${flags}  (${tags.join('; ')})`, `      ${s.description}`);
  }
  return lines.join('\n') + '\n';
}

function toConfig(s: Settings): ExporterConfig {
  return {
    host: s.EXPORTER_HOST,
    port: s.EXPORTER_PORT,
    etcd: {
      endpoints: s.ETCD_ENDPOINTS,
      prefix: s.ETCD_PREFIX,
      username: s.ETCD_USERNAME,
      password: s.ETCD_PASSWORD,
      caCert: s.ETCD_CA_CERT,
      clientCert: s.ETCD_CLIENT_CERT,
      clientKey: s.ETCD_CLIENT_KEY,
    },
    checkIntervalSecs: s.EXPORTER_CHECK_INTERVAL_SECS,
    logLevel: s.LOG_LEVEL,
  };
}
