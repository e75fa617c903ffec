/**
 * The master's settings (docs/ARCHITECTURE.md §3.1): parsing argv and an env map into a {@link MasterConfig}.
 * The binary's `env.ts` is the only reader of `process.env`; it hands the map in here.
 *
 * One zod schema, {@link SettingsSchema}, is the source of truth for every setting: the HTTP API's,
 * declared here, and the scheduler's, from `@maintd/scheduler`. Each field is keyed by its env var,
 * carries its default (applied by the schema itself) and is registered with its description and
 * secrecy. Flags, `--help`, `--print-config` and error messages are all derived from it, so a
 * setting cannot exist in one place and be missing from another.
 */
import {
  type LoadConfigInput,
  type LoadResult as SchedulerLoadResult,
  checkCooldownWindow,
  checkEmbeddedStore,
  resolveSettings,
  schedulerConfig,
  schedulerSettings,
} from '@maintd/scheduler';
import {
  type SettingDescriptor as Descriptor,
  checkEtcdSettings,
  checkServerTlsSettings,
  oneOf,
  optional,
  serverTlsConfig,
  serverTlsSettings,
  setting,
  settingsLoader,
  text,
  wholeNumber,
  word,
} from '@maintd/settings';
import { z } from 'zod';
import type { MasterConfig } from './config.js';

/** MASTER_API_READS: whether API reads need a token (docs/ARCHITECTURE.md §3.4). */
const API_READS = ['open', 'token'] as const;

/** Where the HTTP API listens. */
const listenSettings = {
  MASTER_HOST: setting(word('host', 'an address'), '0.0.0.0', {
    description: 'Address the HTTP API listens on.',
  }),
  MASTER_PORT: setting(wholeNumber(1, 65535, 'port'), '8090', {
    description: 'Port the HTTP API listens on.',
  }),
};

/** Who may call the HTTP API. */
const authSettings = {
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
};

const { MASTER_ID, ...scheduler } = schedulerSettings;

// The order `--help`, `--print-config` and the env file have always listed them in: the master's
// identity between where the API listens and who may call it.
const shape = {
  ...listenSettings,
  MASTER_ID,
  ...authSettings,
  ...serverTlsSettings('MASTER', 'the HTTP API'),
  ...scheduler,
};

/** Env var name of a setting, e.g. `MASTER_PORT`. */
export type EnvName = keyof typeof shape;

/**
 * The schema of every master setting, keyed by env var name (docs/ARCHITECTURE.md §3.1, §2.7). Input: raw
 * strings, absent when unset. Output: typed values with defaults applied.
 */
export const SettingsSchema = z.object(shape).superRefine(
  // The scheduler's rules and the API's, in the order their messages have always been reported.
  (s, ctx) => {
    checkEtcdSettings(s, ctx);
    checkServerTlsSettings('MASTER', s, ctx);
    checkEmbeddedStore(s, ctx);
    // Every read would be refused: no token could ever be presented.
    if (s.MASTER_API_READS === 'token' && s.MASTER_API_TOKEN === undefined && s.MASTER_API_TOKENS_FILE === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['MASTER_API_READS'],
        message: 'token needs MASTER_API_TOKEN or MASTER_API_TOKENS_FILE (else no read could be made)',
      });
    }
    checkCooldownWindow(s, ctx);
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

/** What startup should do. Bad input is a result, not an exception. */
export type LoadResult = SchedulerLoadResult<MasterConfig>;

/**
 * Parses argv and env into a {@link MasterConfig}. Precedence: flag > env var > default; an empty
 * value (env or `--flag=`) counts as unset. `--help`/`-h` wins over everything else, then
 * `--version`/`-V`.
 */
export function loadConfig(input: LoadConfigInput): LoadResult {
  const loaded = loader.load(input.argv, input.env);
  if (loaded.action !== 'parsed') return loaded;
  const resolved = resolveSettings(loaded.settings, input);
  if (loaded.printConfig) return { action: 'print-config', text: loader.printConfig(resolved) };
  const { masterId, ...scheduler } = schedulerConfig(resolved);
  return {
    action: 'run',
    // In the settings' order, as the config has always been laid out.
    config: {
      host: resolved.MASTER_HOST,
      port: resolved.MASTER_PORT,
      masterId,
      apiToken: resolved.MASTER_API_TOKEN,
      apiTokensFile: resolved.MASTER_API_TOKENS_FILE,
      apiReads: resolved.MASTER_API_READS,
      tls: serverTlsConfig('MASTER', resolved),
      ...scheduler,
    },
  };
}
