import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkServerTlsSettings, serverTlsConfig, serverTlsSettings } from './server-tls-settings.js';
import { settingsLoader } from './settings.js';

function loader() {
  const shape = serverTlsSettings('EXPORTER', '/metrics');
  return settingsLoader({
    program: 'd',
    usage: [],
    about: [],
    shape,
    schema: z.object(shape).superRefine((s, ctx) => checkServerTlsSettings('EXPORTER', s, ctx), { when: () => true }),
    emptyDefaultText: 'none',
  });
}

describe('the server TLS settings', () => {
  it('declare a certificate, a key and a client CA under the endpoint’s prefix, as file paths', () => {
    expect(loader().settings.map((s) => `${s.env}=${s.placeholder}`)).toEqual([
      'EXPORTER_TLS_CERT=path',
      'EXPORTER_TLS_KEY=path',
      'EXPORTER_TLS_CLIENT_CA=path',
    ]);
  });

  it('take the certificate and the key together, and the client CA only with them, naming the missing one', () => {
    const r = loader().load([], { EXPORTER_TLS_CERT: 'c.pem' });
    expect(r.action === 'error' && r.message).toBe(
      'invalid EXPORTER_TLS_KEY (--exporter-tls-key): required because EXPORTER_TLS_CERT is set (set both or neither)',
    );
    const ca = loader().load([], { EXPORTER_TLS_CLIENT_CA: 'ca.pem' });
    expect(ca.action === 'error' && ca.message).toBe(
      'invalid EXPORTER_TLS_CERT (--exporter-tls-cert): required because EXPORTER_TLS_CLIENT_CA is set (client certificates need TLS: set EXPORTER_TLS_CERT and EXPORTER_TLS_KEY)',
    );
  });

  it('make a config of the paths, or none (plain HTTP) when unset', () => {
    expect(serverTlsConfig('MASTER', {})).toBeUndefined();
    expect(serverTlsConfig('MASTER', { MASTER_TLS_CERT: 'c', MASTER_TLS_KEY: 'k' })).toEqual({
      prefix: 'MASTER',
      cert: 'c',
      key: 'k',
      clientCa: undefined,
    });
    const r = loader().load([], { EXPORTER_TLS_CERT: 'c', EXPORTER_TLS_KEY: 'k', EXPORTER_TLS_CLIENT_CA: 'a' });
    expect(r.action === 'parsed' && serverTlsConfig('EXPORTER', r.settings)).toEqual({
      prefix: 'EXPORTER',
      cert: 'c',
      key: 'k',
      clientCa: 'a',
    });
  });

  it('print the paths, not the files, in --print-config', () => {
    expect(loader().printConfig({ EXPORTER_TLS_CERT: '/etc/x.pem', EXPORTER_TLS_KEY: '/etc/x.key' })).toBe(
      'EXPORTER_TLS_CERT=/etc/x.pem\nEXPORTER_TLS_KEY=/etc/x.key\nEXPORTER_TLS_CLIENT_CA=\n',
    );
  });
});
