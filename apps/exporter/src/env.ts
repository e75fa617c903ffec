/**
 * The exporter's configuration edge, in the master's style (docs/ARCHITECTURE.md §3.1): this is the only module
 * that reads `process.env`; everything else receives a parsed {@link ExporterConfig}.
 *
 * One zod schema, {@link SettingsSchema}, is the source of truth for every setting: each field is
 * keyed by its env var, carries its default and is registered with its description and secrecy.
 * Flags, `--help`, `--print-config` and error messages are derived from it. The `ETCD_*` and
 * `LOG_*` settings are the master's, from `@maintd/settings`, so one environment file can serve both.
 */
import { DEFAULT_PREFIX } from '@maintd/core';
import {
  type LoadResult as SettingsLoadResult,
  type SettingDescriptor as Descriptor,
  checkEtcdSettings,
  checkServerTlsSettings,
  etcdConfig,
  etcdSettings,
  logSettings,
  serverTlsConfig,
  serverTlsSettings,
  setting,
  settingsLoader,
  timerSecs,
  wholeNumber,
  word,
} from '@maintd/settings';
import { z } from 'zod';
import type { ExporterConfig } from './config.js';
import { DEFAULT_PAGE_SIZE } from './load.js';

// ---- the schema --------------------------------------------------------------------------------

const shape = {
  ...etcdSettings({
    endpointsDescription: 'etcd endpoints of the fleet (required).',
    // Unlike the master, there is no embedded store: an exporter without etcd has nothing to export.
    endpointsRequired: 'required: the exporter reads the fleet state from etcd',
    prefixDescription: 'Key prefix the masters share (their ETCD_PREFIX).',
    prefixAliases: ['--prefix'],
    defaultPrefix: DEFAULT_PREFIX,
    usernameNote: 'Read access to the prefix suffices.',
  }),
  EXPORTER_HOST: setting(word('host', 'an address'), '0.0.0.0', {
    description: 'Address the metrics endpoint listens on.',
    aliases: ['--host'],
  }),
  EXPORTER_PORT: setting(wholeNumber(1, 65535, 'port'), '9464', {
    description: 'Port the metrics endpoint listens on.',
    aliases: ['--port'],
  }),
  ...serverTlsSettings('EXPORTER', '/metrics'),
  EXPORTER_CHECK_INTERVAL_SECS: setting(timerSecs(1), '5', {
    description:
      'How often etcd is checked while the watch is quiet; maintd_exporter_up drops to 0 within about this long of an outage.',
  }),
  EXPORTER_SYNC_PAGE_SIZE: setting(wholeNumber(50, 2000, 'keys'), String(DEFAULT_PAGE_SIZE), {
    description:
      'Keys per range read of a full sync. Fewer hold less at once (a lower memory peak during a sync) but make more reads, each of which costs etcd a count of the keys left in its section; docs/SCALING.md has figures.',
  }),
  ...logSettings(),
};

/** Env var name of a setting, e.g. `EXPORTER_PORT`. */
export type EnvName = keyof typeof shape;

/**
 * The schema of every exporter setting, keyed by env var name. Input: raw strings, absent when
 * unset. Output: typed values with defaults applied.
 */
export const SettingsSchema = z.object(shape).superRefine(
  (s, ctx) => {
    checkEtcdSettings(s, ctx);
    checkServerTlsSettings('EXPORTER', s, ctx);
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
export type LoadResult = SettingsLoadResult<ExporterConfig>;

/** Parses this process's argv and environment (the one read of it in the exporter). */
export function loadProcessConfig(argv: readonly string[]): LoadResult {
  return loadConfig({ argv, env: process.env });
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
    tls: serverTlsConfig('EXPORTER', s),
    etcd: etcdConfig(s),
    checkIntervalSecs: s.EXPORTER_CHECK_INTERVAL_SECS,
    syncPageSize: s.EXPORTER_SYNC_PAGE_SIZE,
    logLevel: s.LOG_LEVEL,
    logFormat: s.LOG_FORMAT,
  };
}
