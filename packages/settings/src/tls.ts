/**
 * `@maintd/settings/tls`: the TLS of a daemon's own HTTP endpoint (docs/ARCHITECTURE.md §3.4),
 * apart from the root entry so that only the daemons that serve HTTPS load `node:tls` and
 * prom-client. The settings fragment itself (`serverTlsSettings`) is in the root entry.
 */
export {
  type CheckedServerTls,
  type ServedCertificate,
  type ServerTlsMaterial,
  type ServerTlsPems,
  checkServerTls,
  readServerTls,
} from './server-tls-material.js';
export {
  type OpenedServerTls,
  type SecureContextTarget,
  ServerTls,
  type ServerTlsObserver,
  type ServerTlsOptions,
} from './server-tls.js';
export { serverTlsMetrics } from './server-tls-metrics.js';
