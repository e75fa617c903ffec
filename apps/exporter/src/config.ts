import type { EtcdConfig, LogFormat, LogLevel, ServerTlsConfig } from '@maintd/settings';

/**
 * The exporter's effective configuration, parsed once at the edge by `env.ts`. Everything below
 * `main.ts` receives this, never `process.env`.
 */
export interface ExporterConfig {
  /** EXPORTER_HOST, EXPORTER_PORT: where `/metrics` is served (default 0.0.0.0:9464). */
  readonly host: string;
  readonly port: number;
  /** EXPORTER_TLS_CERT, EXPORTER_TLS_KEY, EXPORTER_TLS_CLIENT_CA: `/metrics` over HTTPS; undefined = HTTP. */
  readonly tls: ServerTlsConfig | undefined;
  /** ETCD_*: at least one endpoint (there is no embedded store to fall back to); prefix default /maintd. */
  readonly etcd: EtcdConfig;
  /** EXPORTER_CHECK_INTERVAL_SECS, default 5: how often etcd's reachability is checked. */
  readonly checkIntervalSecs: number;
  /** EXPORTER_SYNC_PAGE_SIZE, default 500: keys per range read of a full sync. */
  readonly syncPageSize: number;
  /** LOG_LEVEL, default info. */
  readonly logLevel: LogLevel;
  /** LOG_FORMAT, default auto: pretty when stdout is a terminal (resolved by `main.ts`), else json. */
  readonly logFormat: LogFormat;
}
