import type { Config } from '@maintd/scheduler';
import type { ServerTlsConfig } from '@maintd/settings';

/** The HTTP API's configuration: where it listens, who may call it, and over which transport. */
export interface HttpConfig {
  /** MASTER_HOST, MASTER_PORT: where the HTTP API listens. */
  readonly host: string;
  readonly port: number;
  /** MASTER_API_TOKEN: bearer token mutations need; unset = loopback clients only may mutate. */
  readonly apiToken: string | undefined;
  /** MASTER_API_TOKENS_FILE: path of the named tokens file (read by `main.ts`), or undefined. */
  readonly apiTokensFile: string | undefined;
  /** MASTER_API_READS, default `open`: `token` = API reads need a `read` or `operate` token. */
  readonly apiReads: 'open' | 'token';
  /** MASTER_TLS_CERT, MASTER_TLS_KEY, MASTER_TLS_CLIENT_CA: the API over HTTPS (read by `main.ts`); undefined = HTTP. */
  readonly tls: ServerTlsConfig | undefined;
}

/**
 * The master's effective configuration, parsed once at the edge by `env.ts` (docs/ARCHITECTURE.md §3.1):
 * the scheduler's and its HTTP API's. Everything below `main.ts` receives this, never `process.env`.
 */
export type MasterConfig = Config & HttpConfig;
