import { describe, expect, it } from 'vitest';
import type { ExporterConfig } from './config.js';
import { type LoadResult, loadConfig, settings } from './env.js';

const ETCD = { ETCD_ENDPOINTS: 'http://127.0.0.1:2379' };

function load(argv: readonly string[] = [], env: Record<string, string | undefined> = ETCD): LoadResult {
  return loadConfig({ argv, env });
}

function config(argv: readonly string[] = [], env: Record<string, string | undefined> = ETCD): ExporterConfig {
  const r = load(argv, env);
  if (r.action !== 'run') throw new Error(`expected run, got ${JSON.stringify(r)}`);
  return r.config;
}

function error(argv: readonly string[] = [], env: Record<string, string | undefined> = ETCD): string {
  const r = load(argv, env);
  if (r.action !== 'error') throw new Error(`expected error, got ${JSON.stringify(r)}`);
  return r.message;
}

describe('exporter configuration', () => {
  it('applies the documented defaults once etcd endpoints are given', () => {
    expect(config()).toEqual({
      host: '0.0.0.0',
      port: 9464,
      tls: undefined,
      etcd: {
        endpoints: ['http://127.0.0.1:2379'],
        prefix: '/maintd',
        username: undefined,
        password: undefined,
        caCert: undefined,
        clientCert: undefined,
        clientKey: undefined,
      },
      checkIntervalSecs: 5,
      syncPageSize: 500,
      logLevel: 'info',
      logFormat: 'auto',
    });
  });

  it('serves /metrics over HTTPS with EXPORTER_TLS_CERT and EXPORTER_TLS_KEY, set together', () => {
    const tls = {
      EXPORTER_TLS_CERT: '/etc/e.crt',
      EXPORTER_TLS_KEY: '/etc/e.key',
      EXPORTER_TLS_CLIENT_CA: '/etc/ca.crt',
    };
    expect(config([], { ...ETCD, ...tls }).tls).toEqual({
      prefix: 'EXPORTER',
      cert: '/etc/e.crt',
      key: '/etc/e.key',
      clientCa: '/etc/ca.crt',
    });
    expect(error([], { ...ETCD, EXPORTER_TLS_KEY: '/etc/e.key' })).toMatch(
      /^invalid EXPORTER_TLS_CERT .*required because EXPORTER_TLS_KEY is set/,
    );
  });

  it('requires ETCD_ENDPOINTS, since there is no embedded store to export', () => {
    expect(error([], {})).toMatch(/^invalid ETCD_ENDPOINTS \(--etcd-endpoints\): required/);
    expect(error([], { ETCD_ENDPOINTS: ' , ' })).toMatch(/ETCD_ENDPOINTS/);
  });

  it('accepts the short flags of the usage line and lets a flag override its env var', () => {
    const c = config(['--prefix', '/fleet-a', '--port=9999', '--host', '127.0.0.1'], {
      ...ETCD,
      ETCD_PREFIX: '/ignored',
      EXPORTER_PORT: '1',
    });
    expect(c).toMatchObject({ host: '127.0.0.1', port: 9999, etcd: { prefix: '/fleet-a' } });
    expect(config(['--etcd-endpoints', 'http://a:1,http://b:2/'], {}).etcd.endpoints).toEqual([
      'http://a:1',
      'http://b:2',
    ]);
  });

  it('names the setting and the offending value when a value is bad', () => {
    expect(error(['--port', '70000'])).toBe(
      'invalid EXPORTER_PORT (--exporter-port): expected a whole number from 1 to 65535, got "70000"',
    );
    expect(error([], { ...ETCD, LOG_LEVEL: 'loud' })).toMatch(/^invalid LOG_LEVEL \(--log-level\): expected one of/);
    expect(error([], { ...ETCD, LOG_FORMAT: 'text' })).toMatch(
      /^invalid LOG_FORMAT \(--log-format\): expected one of auto, json, pretty, got "text"/,
    );
    expect(error([], { ETCD_ENDPOINTS: 'etcd:2379' })).toMatch(/ETCD_ENDPOINTS.*http\(s\)/);
    expect(error(['--nope=1'])).toBe('unknown flag --nope (see --help)');
  });

  it('takes the keys per sync read from EXPORTER_SYNC_PAGE_SIZE, within what one etcd reply can carry', () => {
    expect(config([], { ...ETCD, EXPORTER_SYNC_PAGE_SIZE: '100' }).syncPageSize).toBe(100);
    expect(error([], { ...ETCD, EXPORTER_SYNC_PAGE_SIZE: '10' })).toBe(
      'invalid EXPORTER_SYNC_PAGE_SIZE (--exporter-sync-page-size): expected a whole number from 50 to 2000, got "10"',
    );
  });

  it('requires credentials and client certificates in pairs, without echoing the password', () => {
    const msg = error([], { ...ETCD, ETCD_PASSWORD: 's3cret' });
    expect(msg).toMatch(/ETCD_USERNAME.*required because ETCD_PASSWORD is set/);
    expect(msg).not.toContain('s3cret');
    expect(error([], { ...ETCD, ETCD_CLIENT_CERT: '/c.pem', ETCD_CLIENT_KEY: '/k.pem' })).toMatch(
      /ETCD_CA_CERT.*required because ETCD_CLIENT_CERT is set/,
    );
  });

  it('prints every setting with --print-config and redacts secrets', () => {
    const r = load(['--print-config'], { ...ETCD, ETCD_USERNAME: 'u', ETCD_PASSWORD: 's3cret' });
    if (r.action !== 'print-config') throw new Error(r.action);
    for (const s of settings) expect(r.text).toMatch(new RegExp(`^${s.env}=`, 'm'));
    expect(r.text).toContain('ETCD_PASSWORD=<redacted>');
    expect(r.text).not.toContain('s3cret');
  });

  it('documents every setting and flag in --help', () => {
    const r = load(['--help'], {});
    if (r.action !== 'help') throw new Error(r.action);
    for (const s of settings) {
      expect(r.text).toContain(s.env);
      for (const f of [s.flag, ...s.aliases]) expect(r.text).toContain(`${f}=`);
    }
  });
});
