import type { LogFormat } from '@maintd/settings';

/** Log levels pino understands. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A pino log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The exporter's effective configuration, parsed once at the edge by `env.ts`. Everything below
 * `main.ts` receives this, never `process.env`.
 */
export interface ExporterConfig {
  /** EXPORTER_HOST, EXPORTER_PORT: where `/metrics` is served (default 0.0.0.0:9464). */
  readonly host: string;
  readonly port: number;
  readonly etcd: {
    /** ETCD_ENDPOINTS: at least one; the exporter has no embedded store to fall back to. */
    readonly endpoints: readonly string[];
    /** ETCD_PREFIX, default /maintd: the prefix the masters of one fleet share. */
    readonly prefix: string;
    readonly username: string | undefined;
    readonly password: string | undefined;
    /** ETCD_CA_CERT, ETCD_CLIENT_CERT, ETCD_CLIENT_KEY: PEM file paths. */
    readonly caCert: string | undefined;
    readonly clientCert: string | undefined;
    readonly clientKey: string | undefined;
  };
  /** EXPORTER_CHECK_INTERVAL_SECS, default 5: how often etcd's reachability is checked. */
  readonly checkIntervalSecs: number;
  /** LOG_LEVEL, default info. */
  readonly logLevel: LogLevel;
  /** LOG_FORMAT, default auto: pretty when stdout is a terminal (resolved by `main.ts`), else json. */
  readonly logFormat: LogFormat;
}
