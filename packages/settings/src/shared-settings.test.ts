import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkEtcdSettings, etcdConfig, etcdSettings, logSettings } from './shared-settings.js';
import { settingsLoader } from './settings.js';

function loader(required?: string) {
  const shape = {
    ...etcdSettings({
      endpointsDescription: 'etcd endpoints.',
      ...(required ? { endpointsRequired: required } : {}),
      prefixDescription: 'Key prefix.',
      prefixAliases: ['--prefix'],
      defaultPrefix: '/maintd',
      usernameNote: 'Read access suffices.',
    }),
    ...logSettings(),
  };
  return settingsLoader({
    program: 'd',
    usage: [],
    about: [],
    shape,
    schema: z.object(shape).superRefine(checkEtcdSettings, { when: () => true }),
    emptyDefaultText: 'none',
  });
}

describe('the shared etcd and log settings', () => {
  it('reports the missing half of a credential or certificate pair, and a client certificate without its CA, on the missing setting', () => {
    const r = loader().load([], { ETCD_USERNAME: 'u', ETCD_CLIENT_KEY: 'k.pem', ETCD_CLIENT_CERT: 'c.pem' });
    expect(r.action === 'error' && r.message.split('\n')).toEqual([
      'invalid ETCD_PASSWORD (--etcd-password): required because ETCD_USERNAME is set (set both or neither)',
      'invalid ETCD_CA_CERT (--etcd-ca-cert): required because ETCD_CLIENT_CERT is set (a client certificate needs the CA)',
    ]);
  });

  it('requires endpoints only of a daemon that says so, in its words', () => {
    expect(loader().load([], {}).action).toBe('parsed');
    const r = loader('required: no embedded store').load([], {});
    expect(r.action === 'error' && r.message).toBe(
      'invalid ETCD_ENDPOINTS (--etcd-endpoints): required: no embedded store',
    );
  });

  it('takes the daemon’s own descriptions and aliases, and gives a config its etcd section', () => {
    const l = loader();
    expect(l.settings.find((s) => s.env === 'ETCD_USERNAME')?.description).toBe(
      'etcd user name; set together with ETCD_PASSWORD. Read access suffices.',
    );
    expect(l.settings.map((s) => s.env).join(' ')).toBe(
      'ETCD_ENDPOINTS ETCD_PREFIX ETCD_USERNAME ETCD_PASSWORD ETCD_CA_CERT ETCD_CLIENT_CERT ETCD_CLIENT_KEY LOG_LEVEL LOG_FORMAT',
    );
    const r = l.load(['--prefix=/fleet'], { ETCD_ENDPOINTS: 'http://a:1', LOG_LEVEL: 'WARN' });
    if (r.action !== 'parsed') throw new Error(JSON.stringify(r));
    expect(r.settings).toMatchObject({ LOG_LEVEL: 'warn', LOG_FORMAT: 'auto' });
    expect(etcdConfig(r.settings)).toEqual({
      endpoints: ['http://a:1'],
      prefix: '/fleet',
      username: undefined,
      password: undefined,
      caCert: undefined,
      clientCert: undefined,
      clientKey: undefined,
    });
  });
});
