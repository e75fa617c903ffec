/**
 * The exporter's configuration edge, in the master's style (DESIGN §3.1): this is the only module
 * that reads `process.env`; everything else receives a parsed {@link ExporterConfig}.
 *
 * One zod schema, {@link SettingsSchema}, is the source of truth for every setting: each field is
 * keyed by its env var, carries its default and is registered with its description and secrecy.
 * Flags, `--help`, `--print-config` and error messages are derived from it. The etcd settings
 * have the master's names, so one environment file can serve both.
 */
import { DEFAULT_PREFIX } from '@maintd/core';
import {
  type SettingDescriptor as Descriptor,
  logFormat,
  oneOf,
  optional,
  setting,
  settingsLoader,
  text,
  timerSecs,
  urlList,
  wholeNumber,
  word,
} from '@maintd/settings';
import { z } from 'zod';
import { type ExporterConfig, LOG_LEVELS } from './config.js';

const logLevel = oneOf(LOG_LEVELS, 'level');

// Unlike the master, there is no embedded store: an exporter without etcd has nothing to export.
const etcdEndpoints = urlList({
  allowPath: false,
  required: 'required: the exporter reads the fleet state from etcd',
});

// ---- the schema --------------------------------------------------------------------------------

const shape = {
  ETCD_ENDPOINTS: setting(etcdEndpoints, '', {
    description: 'etcd endpoints of the fleet (required).',
  }),
  ETCD_PREFIX: setting(word('prefix', 'a key prefix'), DEFAULT_PREFIX, {
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
  EXPORTER_CHECK_INTERVAL_SECS: setting(timerSecs(1), '5', {
    description:
      'How often etcd is checked while the watch is quiet; maintd_exporter_up drops to 0 within about this long of an outage.',
  }),
  LOG_LEVEL: setting(logLevel, 'info', {
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
  }),
  LOG_FORMAT: setting(logFormat, 'auto', {
    description: 'Log format: json, pretty, or auto (pretty when stdout is a terminal, else json).',
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
export type SettingDescriptor = Descriptor<EnvName>;

const loader = settingsLoader({
  program: 'maintd-exporter',
  usage: ['--etcd-endpoints=<url,...> [--prefix=/maintd] [--port=9464] [options]'],
  about: [
    'Cluster-wide Prometheus metrics of a maintd fleet: one etcd range read, then a watch, with',
    'the aggregates kept in memory so a scrape never waits on etcd. Every setting is a flag and an',
    'environment variable; a flag overrides the variable, and an empty value counts as unset.',
  ],
  shape,
  schema: SettingsSchema,
  emptyDefaultText: 'none',
});

/** Every setting, in schema order. */
export const settings: readonly SettingDescriptor[] = loader.settings;

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
  /** `--version`/`-V`: the binary prints its version. */
  | { readonly action: 'version' }
  | { readonly action: 'print-config'; readonly text: string }
  | { readonly action: 'error'; readonly message: string };

/** The one read of the process environment in the exporter. */
export function readProcessEnv(): Readonly<Record<string, string | undefined>> {
  return process.env;
}

/** Whether stdout is a terminal: `LOG_FORMAT=auto` is pretty there and JSON anywhere else. */
export function stdoutIsTty(): boolean {
  return process.stdout.isTTY === true;
}

/**
 * Parses argv and env into an {@link ExporterConfig}. Precedence: flag > env var > default; an
 * empty value (env or `--flag=`) counts as unset. `--help`/`-h` wins over everything else, then
 * `--version`/`-V`.
 */
export function loadConfig(input: LoadConfigInput): LoadResult {
  const loaded = loader.load(input.argv, input.env);
  if (loaded.action !== 'parsed') return loaded;
  if (loaded.printConfig) return { action: 'print-config', text: loader.printConfig(loaded.settings) };
  return { action: 'run', config: toConfig(loaded.settings) };
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
    logFormat: s.LOG_FORMAT,
  };
}
