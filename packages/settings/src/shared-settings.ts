/**
 * The settings both daemons have, declared once (docs/ARCHITECTURE.md §3.1): how to reach etcd
 * (`ETCD_*`) and how to log (`LOG_*`). Each daemon spreads {@link etcdSettings} and
 * {@link logSettings} into its schema's shape, says in its own words what the endpoints and the
 * prefix are to it, and checks its schema with {@link checkEtcdSettings}. So one environment file
 * can serve a master and an exporter, and a rule about these settings cannot differ between them.
 */
import type { z } from 'zod';
import { logFormat } from './log-format.js';
import { oneOf, optional, setting, text, urlList, word } from './settings.js';

/** Log levels pino understands, most severe first. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A pino log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What a daemon says about its etcd settings; the rest is the same for both. */
export interface EtcdSettingsOptions {
  /** `--help`'s line for ETCD_ENDPOINTS. */
  readonly endpointsDescription: string;
  /**
   * The message an empty ETCD_ENDPOINTS fails with, for a daemon that cannot run without etcd;
   * without it, empty is a valid value (the master's embedded store).
   */
  readonly endpointsRequired?: string;
  /** `--help`'s line for ETCD_PREFIX. */
  readonly prefixDescription: string;
  /** Flags ETCD_PREFIX is accepted under besides `--etcd-prefix`, e.g. `--prefix`. */
  readonly prefixAliases?: readonly string[];
  /** ETCD_PREFIX's default (core's `DEFAULT_PREFIX`). */
  readonly defaultPrefix: string;
  /** Said after ETCD_USERNAME's line, e.g. the access the daemon needs. */
  readonly usernameNote?: string;
}

/** The `ETCD_*` settings: endpoints, prefix, credentials and TLS files, in `--help`'s order. */
export function etcdSettings(o: EtcdSettingsOptions) {
  return {
    ETCD_ENDPOINTS: setting(
      urlList({ allowPath: false, ...(o.endpointsRequired === undefined ? {} : { required: o.endpointsRequired }) }),
      '',
      { description: o.endpointsDescription },
    ),
    ETCD_PREFIX: setting(word('prefix', 'a key prefix'), o.defaultPrefix, {
      description: o.prefixDescription,
      ...(o.prefixAliases ? { aliases: o.prefixAliases } : {}),
    }),
    ETCD_USERNAME: optional(text('user'), {
      description: `etcd user name; set together with ETCD_PASSWORD.${o.usernameNote ? ` ${o.usernameNote}` : ''}`,
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
  };
}

/** The `LOG_*` settings: level and format. */
export function logSettings() {
  return {
    LOG_LEVEL: setting(oneOf(LOG_LEVELS, 'level'), 'info', {
      description: `Log level: ${LOG_LEVELS.join(', ')}.`,
    }),
    LOG_FORMAT: setting(logFormat, 'auto', {
      description: 'Log format: json, pretty, or auto (pretty when stdout is a terminal, else json).',
    }),
  };
}

/** The parsed `ETCD_*` settings, as {@link checkEtcdSettings} and {@link etcdConfig} read them. */
export interface EtcdSettingValues {
  readonly ETCD_ENDPOINTS: readonly string[];
  readonly ETCD_PREFIX: string;
  readonly ETCD_USERNAME?: string | undefined;
  readonly ETCD_PASSWORD?: string | undefined;
  readonly ETCD_CA_CERT?: string | undefined;
  readonly ETCD_CLIENT_CERT?: string | undefined;
  readonly ETCD_CLIENT_KEY?: string | undefined;
}

/**
 * The rules across `ETCD_*` settings, for a schema's `superRefine`: credentials and client
 * certificates come in pairs, and a client certificate needs the CA. Each broken rule is an
 * issue on the setting that is missing.
 */
export function checkEtcdSettings(s: Partial<EtcdSettingValues>, ctx: z.RefinementCtx): void {
  const required = (path: keyof EtcdSettingValues, message: string): void => {
    ctx.addIssue({ code: 'custom', path: [path], message, params: { got: null } });
  };
  const pair = (a: keyof EtcdSettingValues, b: keyof EtcdSettingValues): void => {
    if ((s[a] === undefined) !== (s[b] === undefined)) {
      const [set, unset] = s[a] === undefined ? [b, a] : [a, b];
      required(unset, `required because ${set} is set (set both or neither)`);
    }
  };
  pair('ETCD_USERNAME', 'ETCD_PASSWORD');
  pair('ETCD_CLIENT_CERT', 'ETCD_CLIENT_KEY');
  if (s.ETCD_CLIENT_CERT !== undefined && s.ETCD_CA_CERT === undefined) {
    required('ETCD_CA_CERT', 'required because ETCD_CLIENT_CERT is set (a client certificate needs the CA)');
  }
}

/** How a daemon's config holds its `ETCD_*` settings. */
export interface EtcdConfig {
  /** ETCD_ENDPOINTS. */
  readonly endpoints: readonly string[];
  /** ETCD_PREFIX. */
  readonly prefix: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** ETCD_CA_CERT, ETCD_CLIENT_CERT, ETCD_CLIENT_KEY: PEM file paths. */
  readonly caCert: string | undefined;
  readonly clientCert: string | undefined;
  readonly clientKey: string | undefined;
}

/** The `ETCD_*` settings as a config's `etcd` section. */
export function etcdConfig(s: EtcdSettingValues): EtcdConfig {
  return {
    endpoints: s.ETCD_ENDPOINTS,
    prefix: s.ETCD_PREFIX,
    username: s.ETCD_USERNAME,
    password: s.ETCD_PASSWORD,
    caCert: s.ETCD_CA_CERT,
    clientCert: s.ETCD_CLIENT_CERT,
    clientKey: s.ETCD_CLIENT_KEY,
  };
}
