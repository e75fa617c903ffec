import { Counter, Gauge, type Registry } from 'prom-client';
import type { ServerTlsObserver } from './server-tls.js';

/**
 * The metrics an operator of a TLS endpoint alerts on (docs/ARCHITECTURE.md §3.5, §5), on a
 * daemon's registry under its prefix (`master`, `maintd_exporter`): reloads by result, and when
 * the served certificate expires (`deploy/prometheus/alerts.yml` warns a week ahead). Returns the
 * observer to hand to `ServerTls.observe`.
 */
export function serverTlsMetrics(registry: Registry, prefix: string): ServerTlsObserver {
  const reloads = new Counter({
    name: `${prefix}_tls_reloads_total`,
    help: 'Changes of the TLS files read since start, by result: ok (in force for new connections) or error (refused; the previous certificate stays).',
    labelNames: ['result'],
    registers: [registry],
  });
  for (const result of ['ok', 'error']) reloads.inc({ result }, 0);
  const expiry = new Gauge({
    name: `${prefix}_tls_certificate_expiry_timestamp_seconds`,
    help: 'When the certificate served to new connections expires (Unix seconds).',
    registers: [registry],
  });
  const notBefore = new Gauge({
    name: `${prefix}_tls_certificate_not_before_timestamp_seconds`,
    help: 'When the certificate served to new connections became valid (Unix seconds): changes on each rotation.',
    registers: [registry],
  });
  return {
    reloaded: (result) => reloads.inc({ result }),
    serving: (c) => {
      expiry.set(c.notAfterMs / 1000);
      notBefore.set(c.notBeforeMs / 1000);
    },
  };
}
