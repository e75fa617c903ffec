import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { serverTlsMetrics } from './server-tls-metrics.js';

describe('serverTlsMetrics', () => {
  it('counts reloads by result from zero and shows the served certificate’s validity in Unix seconds', async () => {
    const registry = new Registry();
    const observer = serverTlsMetrics(registry, 'master');
    observer.serving({ serialNumber: '01', fingerprint256: 'AA', notBeforeMs: 1_000_000, notAfterMs: 2_000_500 });
    observer.reloaded('error');
    const text = await registry.metrics();
    expect(text).toContain('master_tls_reloads_total{result="ok"} 0');
    expect(text).toContain('master_tls_reloads_total{result="error"} 1');
    expect(text).toContain('master_tls_certificate_expiry_timestamp_seconds 2000.5');
    expect(text).toContain('master_tls_certificate_not_before_timestamp_seconds 1000');
  });
});
