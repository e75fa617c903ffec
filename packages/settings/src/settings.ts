/**
 * The configuration edge every maintd binary shares (docs/ARCHITECTURE.md §3.1). Each binary declares one zod
 * schema whose fields are keyed by env var, carry their defaults and are registered with their
 * description and secrecy; flags, `--help`, `--print-config` and error messages are all derived
 * from it, so a setting cannot exist in one place and be missing from another.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { HELP_ENTRY, type HelpEntry, VERSION_ENTRY, formatHelp } from './help.js';

/** Longest duration a Node timer can wait; above it `setTimeout` fires after 1 ms instead. */
export const MAX_TIMER_SECS = Math.floor((2 ** 31 - 1) / 1000);

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
  /** Flags accepted besides the derived one, e.g. `--port`. */
  readonly aliases: readonly string[];
}

const registry = z.registry<SettingMeta>();

/** A string parser plus the placeholder `--help` shows for its values. */
export interface ValueType<T> {
  readonly schema: z.ZodType<T, string>;
  readonly placeholder: string;
  /** `--flag` alone means true (and `--flag=false` false). */
  readonly boolean?: boolean;
}

/** How a setting presents itself. */
export interface SettingOptions {
  readonly description: string;
  readonly secret?: boolean;
  readonly placeholder?: string;
  /** How `--help` shows a default computed at startup (optional settings only). */
  readonly defaultText?: string;
  /** Flags accepted besides the one derived from the env var, e.g. `--port`. */
  readonly aliases?: readonly string[];
}

/** A setting that always has a value: unset means `default`, parsed like any other input. */
export function setting<T>(type: ValueType<T>, defaultValue: string, o: SettingOptions) {
  // prefault (not default) runs the default through the parser, so defaults obey the same rules.
  return type.schema.prefault(defaultValue).register(registry, meta(type, defaultValue, o));
}

/** A setting whose absence is meaningful (no token, no TLS, …). */
export function optional<T>(type: ValueType<T>, o: SettingOptions) {
  return type.schema.optional().register(registry, meta(type, undefined, o));
}

function meta(type: ValueType<unknown>, defaultValue: string | undefined, o: SettingOptions): SettingMeta {
  return {
    description: o.description,
    default: defaultValue,
    ...(o.defaultText === undefined ? {} : { defaultText: o.defaultText }),
    secret: o.secret ?? false,
    boolean: type.boolean ?? false,
    placeholder: o.placeholder ?? type.placeholder,
    aliases: o.aliases ?? [],
  };
}

/** Issue params: `got` overrides the value echoed in the error; null echoes nothing. */
export interface IssueParams {
  readonly got?: string | null;
}

/** Reports a custom issue from a transform or refinement. */
export function fail(ctx: z.RefinementCtx, message: string, params?: IssueParams): typeof z.NEVER {
  ctx.addIssue({ code: 'custom', message, ...(params ? { params } : {}) });
  return z.NEVER;
}

// ---- value types -------------------------------------------------------------------------------

/** Whole numbers only: `1.5`, `1e3`, `-1` and `0x10` are rejected rather than coerced. */
export function wholeNumber(min: number, max: number = Number.MAX_SAFE_INTEGER, placeholder = 'n'): ValueType<number> {
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
export function timerSecs(min: number): ValueType<number> {
  return wholeNumber(min, MAX_TIMER_SECS, 'secs');
}

/** A plain decimal in [min, max] or [min, max); no exponents, no signs. */
export function decimal(min: number, max: number, maxExclusive: boolean, placeholder: string): ValueType<number> {
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

/** true/1/yes/on or false/0/no/off, any case; a flag alone means true. */
export const bool: ValueType<boolean> = {
  placeholder: 'bool',
  boolean: true,
  schema: z.string().transform((raw, ctx) => {
    const s = raw.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
    return fail(ctx, 'expected true or false');
  }),
};

/** A string used verbatim (file paths, passwords, user names). */
export function text(placeholder: string): ValueType<string> {
  return { placeholder, schema: z.string() };
}

/** A single token-like word: no whitespace or control characters, which would corrupt a key or header. */
export function word(
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

/**
 * Comma-separated http(s) base URLs; blanks between commas are ignored, trailing slashes
 * trimmed so callers can append `/api/...`. Credentials in a URL are refused (they have their
 * own settings) and never echoed. With `required`, an empty list fails with that message.
 */
export function urlList(o: { readonly allowPath: boolean; readonly required?: string }): ValueType<readonly string[]> {
  const expected = o.allowPath
    ? 'expected comma-separated http(s) URLs'
    : 'expected comma-separated http(s)://host:port URLs';
  const extras = o.allowPath ? 'without a query or fragment' : 'without a path, query or fragment';
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
        if (url.search !== '' || url.hash !== '' || /[?#]/.test(item) || (!o.allowPath && url.pathname !== '/')) {
          return fail(ctx, `${expected} ${extras}`, { got });
        }
        const key = url.href.replace(/\/+$/, '');
        if (seen.has(key)) return fail(ctx, `${expected}, each listed once; this one is listed twice`, { got });
        seen.add(key);
        out.push(item.replace(/\/+$/, ''));
      }
      return out.length > 0 || o.required === undefined ? out : fail(ctx, o.required);
    }),
  };
}

/** One of `values`, any case and surrounding whitespace (e.g. a log level). */
export function oneOf<T extends string>(values: readonly T[], placeholder: string): ValueType<T> {
  return {
    placeholder,
    schema: z.string().transform((raw, ctx) => {
      const s = raw.trim().toLowerCase();
      return (values as readonly string[]).includes(s) ? (s as T) : fail(ctx, `expected one of ${values.join(', ')}`);
    }),
  };
}

// ---- the loader --------------------------------------------------------------------------------

/** One setting, as `--help`, `--print-config`, tests and docs see it. */
export interface SettingDescriptor<E extends string = string> {
  /** Environment variable, e.g. `MASTER_PORT`. */
  readonly env: E;
  /** Flag, e.g. `--master-port`. */
  readonly flag: string;
  /** Other accepted flags, e.g. `--port`. */
  readonly aliases: readonly string[];
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

/** What a binary tells {@link settingsLoader} about itself. */
export interface SettingsLoaderOptions<S extends z.ZodRawShape, O> {
  /** The binary's name, as error messages and `--help` give it. */
  readonly program: string;
  /** `--help`'s usage lines, after the program name, e.g. `[options]`. */
  readonly usage: readonly string[];
  /** `--help`'s paragraph on what the binary does, one string per line. */
  readonly about: readonly string[];
  /** The settings, keyed by env var, each built with {@link setting} or {@link optional}. */
  readonly shape: S;
  /** `z.object(shape)`, refined with the rules that span several settings. */
  readonly schema: { safeParse(input: unknown): z.ZodSafeParseResult<O> };
  /** How `--help` shows an empty default (an empty list), e.g. `empty`. */
  readonly emptyDefaultText: string;
}

/** The outcome of reading argv and env: parsed settings, or what to do instead. */
export type LoadedSettings<O> =
  | { readonly action: 'parsed'; readonly settings: O; readonly printConfig: boolean }
  | { readonly action: 'help'; readonly text: string }
  /** `--version`/`-V`: the binary prints its own version (see `versionText`). */
  | { readonly action: 'version' }
  | { readonly action: 'error'; readonly message: string };

/** A parsed setting's value, as `--print-config` prints it. */
export type SettingValue = string | number | boolean | readonly string[];

/** A binary's settings, and the one way to read them. */
export interface SettingsLoader<E extends string, O> {
  /** Every setting, in schema order. */
  readonly settings: readonly SettingDescriptor<E>[];
  /**
   * Parses argv and env. Precedence: flag > env var > default; an empty value (env or `--flag=`)
   * counts as unset. `--help`/`-h` wins over everything else, then `--version`/`-V`. Bad input
   * is a result.
   */
  load(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): LoadedSettings<O>;
  /** `KEY=value` lines of every setting, secrets redacted (what `--print-config` prints). */
  printConfig(values: Readonly<Partial<Record<E, SettingValue>>>): string;
}

/** `MASTER_PORT` → `--master-port`. */
function flagOf(env: string): string {
  return `--${env.toLowerCase().replaceAll('_', '-')}`;
}

/** Derives a binary's flags, help, print-config and error messages from its settings schema. */
export function settingsLoader<S extends z.ZodRawShape, O>(
  o: SettingsLoaderOptions<S, O>,
): SettingsLoader<Extract<keyof S, string>, O> {
  type E = Extract<keyof S, string>;
  const settings: readonly SettingDescriptor<E>[] = Object.freeze(
    (Object.keys(o.shape) as E[]).map((env): SettingDescriptor<E> => {
      const m = registry.get(o.shape[env]!);
      if (!m) throw new Error(`setting ${env} is not registered`);
      return Object.freeze({
        env,
        flag: flagOf(env),
        aliases: m.aliases,
        default: m.default,
        defaultText:
          m.defaultText ?? (m.default === undefined ? 'unset' : m.default === '' ? o.emptyDefaultText : m.default),
        secret: m.secret,
        boolean: m.boolean,
        placeholder: m.placeholder,
        description: m.description,
      });
    }),
  );
  const byEnv = new Map<string, SettingDescriptor<E>>(settings.map((s) => [s.env, s]));
  const byFlagName = new Map<string, SettingDescriptor<E>>(
    settings.flatMap((s) => [s.flag, ...s.aliases].map((f) => [f.slice(2), s] as const)),
  );

  const readArgs = (argv: readonly string[]) => {
    const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'V' },
      'print-config': { type: 'boolean' },
    };
    for (const [name, s] of byFlagName) options[name] = { type: s.boolean ? 'boolean' : 'string' };
    // Non-strict with tokens: strict mode cannot express `--bool=false`, and its messages do not
    // name our settings. Every token is checked below instead.
    const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
    let help = false;
    let version = false;
    let printConfig = false;
    /** Flag values by env name; '' = given empty (resets to the default). */
    const values = new Map<string, string>();
    const errors: string[] = [];
    for (const t of tokens) {
      if (t.kind === 'positional') {
        // Not echoed: after a misspelled flag it is that flag's value, perhaps a secret.
        errors.push(`unexpected argument #${t.index + 1} (${o.program} takes flags only; see --help)`);
        continue;
      }
      if (t.kind === 'option-terminator') continue;
      if (t.name === 'help' || t.name === 'version' || t.name === 'print-config') {
        if (t.value !== undefined) errors.push(`${t.rawName} takes no value`);
        else if (t.name === 'help') help = true;
        else if (t.name === 'version') version = true;
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
        errors.push(`${t.rawName} (${s.env}) needs a value; write ${t.rawName}=VALUE for a value starting with "-"`);
      } else {
        values.set(s.env, t.value);
      }
    }
    return { help, version, printConfig, values, errors };
  };

  const describeIssue = (issue: z.core.$ZodIssue, raw: Partial<Record<string, string>>): string => {
    const key = issue.path[0];
    const s = typeof key === 'string' ? byEnv.get(key) : undefined;
    if (!s) return `invalid configuration: ${issue.message}`;
    const params = (issue.code === 'custom' ? issue.params : undefined) as IssueParams | undefined;
    const value = raw[s.env];
    // A secret's value is never echoed, not even when it is the part that is wrong.
    const got = s.secret || params?.got === null ? undefined : (params?.got ?? value);
    const suffix = got === undefined ? '' : `, got ${JSON.stringify(got)}`;
    return `invalid ${s.env} (${s.flag}): ${issue.message}${suffix}`;
  };

  const formatValue = (s: SettingDescriptor<E>, value: SettingValue | undefined): string => {
    if (value === undefined) return '';
    if (s.secret) return '<redacted>';
    const text = typeof value === 'object' ? value.join(',') : String(value);
    // Quote what would not survive as one KEY=value line in an env file.
    return /[\s"'\\#]/.test(text) ? JSON.stringify(text) : text;
  };

  const helpText = (): string => {
    const PRINT_CONFIG: HelpEntry = {
      term: '--print-config',
      description: 'Print the effective configuration as KEY=value lines (secrets redacted) and exit.',
    };
    return formatHelp({
      program: o.program,
      usage: o.usage,
      about: o.about,
      sections: [
        { title: 'Options', entries: [HELP_ENTRY, VERSION_ENTRY, PRINT_CONFIG] },
        {
          title: 'Settings',
          entries: settings.map((s) => ({
            term: s.boolean
              ? `${s.flag}[=false]`
              : [s.flag, ...s.aliases].map((f) => `${f}=<${s.placeholder}>`).join(', '),
            tags: [`env ${s.env}`, `default: ${s.defaultText}`, ...(s.secret ? ['secret'] : [])],
            description: s.description,
          })),
        },
      ],
    });
  };

  return {
    settings,
    load: (argv, env) => {
      const args = readArgs(argv);
      if (args.help) return { action: 'help', text: helpText() };
      if (args.version) return { action: 'version' };
      const raw: Partial<Record<string, string>> = {};
      for (const s of settings) {
        const v = args.values.has(s.env) ? args.values.get(s.env) : env[s.env];
        if (v !== undefined && v !== '') raw[s.env] = v;
      }
      const errors = [...args.errors];
      const parsed = o.schema.safeParse(raw);
      if (!parsed.success) for (const issue of parsed.error.issues) errors.push(describeIssue(issue, raw));
      if (!parsed.success || errors.length > 0) return { action: 'error', message: errors.join('\n') };
      return { action: 'parsed', settings: parsed.data, printConfig: args.printConfig };
    },
    printConfig: (values) => settings.map((s) => `${s.env}=${formatValue(s, values[s.env])}`).join('\n') + '\n',
  };
}
