/**
 * TLS on the master's API and the exporter's `/metrics` (docs/ARCHITECTURE.md §3.4, §5), against
 * the real binaries with certificates made by `openssl` in the test (`harness/tls.ts`):
 *
 * - a wrong CA, a hostname mismatch, a missing and an expired client certificate are refused;
 * - a certificate rotated on disk under steady load (new connections all the time) is picked up
 *   by new connections with no failed request, while an open connection keeps the old one;
 * - a bad TLS file at start exits 2 naming the setting;
 * - a client certificate whose subject the tokens file maps to `read` cannot mutate (403), an
 *   `operate` one can, and is named as `<name>@<address>`;
 * - the exporter serves `/metrics` over mutual TLS.
 */
import { X509Certificate } from 'node:crypto';
import { chmod, copyFile, readFile, rename, writeFile } from 'node:fs/promises';
import { Agent, get } from 'node:https';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import { type EtcdServer, freePort, startEtcd } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpsAnswer, type TlsClient, httpsRequest } from './harness/https.js';
import { BIN, type Child, FAST_MASTER_ENV, eventually, logLines, runNode, spawnNode } from './harness/processes.js';
import { recordFigures } from './harness/report.js';
import { type TestPki, generateTestPki, issueCertificate } from './harness/tls.js';

const PREFIX = `/maintd-tls-${Date.now().toString(36)}`;
const SERVER_EXT = 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost';
const CLIENT_EXT = 'extendedKeyUsage=clientAuth';

interface Pem {
  readonly cert: string;
  readonly key: string;
}

let pki: TestPki;
let etcd: EtcdServer;
/** PEM text of the CA, the rogue CA, and each client's certificate and key. */
let ca: string;
let rogueCa: string;
let ops: Pem;
let viewer: Pem;
let stranger: Pem;
let expiredClient: Pem;
let rogueClient: Pem;
/** Files: the first serving certificate, its replacement, an expired one. */
let served: { cert: string; key: string };
let rotated: { cert: string; key: string };
let expiredServer: { cert: string; key: string };
/** Where the master reads its certificate and key (rotated in place). */
let apiCert: string;
let apiKey: string;
let tokensFile: string;
const started: Child[] = [];

const figures = {
  refused: {} as Record<string, string>,
  rotation: null as null | {
    clients: number;
    duration_ms: number;
    requests: number;
    failed: number;
    old_serial_requests: number;
    new_serial_requests: number;
    picked_up_after_ms: number | null;
    reloads: Record<string, number>;
  },
  startup_failures: {} as Record<string, { exit: number | string; message: string }>,
};

const text = (path: string): Promise<string> => readFile(path, 'utf8');
const pemOf = async (f: { cert: string; key: string }): Promise<Pem> => ({
  cert: await text(f.cert),
  key: await text(f.key),
});
const serialOf = async (path: string): Promise<string> => new X509Certificate(await text(path)).serialNumber;

/** A running master or exporter over HTTPS. */
interface Daemon extends Child {
  readonly url: string;
}

/** Starts a daemon and resolves once `/healthz` answers 200 over mutual TLS as `ops`. */
async function startTlsDaemon(bin: string, env: Record<string, string>, port: number): Promise<Daemon> {
  const child = spawnNode(bin, [], env);
  started.push(child);
  const url = `https://127.0.0.1:${port}`;
  await eventually(async () => {
    if (!child.running()) throw new Error(`${bin} exited early:\n${child.output().slice(-4000)}`);
    const r = await httpsRequest(`${url}/healthz`, { ca, ...ops }, { timeoutMs: 2000 });
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('starting');
  }, 30_000);
  return { ...child, url };
}

async function startTlsMaster(extra: Record<string, string> = {}): Promise<Daemon> {
  const port = await freePort();
  return startTlsDaemon(
    BIN.maintd,
    {
      ...FAST_MASTER_ENV,
      MASTER_ID: `tls-${port}`,
      MASTER_PORT: String(port),
      ETCD_ENDPOINTS: etcd.clientUrl,
      ETCD_PREFIX: PREFIX,
      MASTER_TLS_CERT: apiCert,
      MASTER_TLS_KEY: apiKey,
      MASTER_TLS_CLIENT_CA: pki.caCert,
      MASTER_API_TOKENS_FILE: tokensFile,
      ...extra,
    },
    port,
  );
}

/** Why a request failed, in a few words for the report. */
const reason = (err: unknown): string => {
  const e = err as Error & { code?: string };
  return e.code ?? e.message.slice(0, 120);
};

beforeAll(async () => {
  pki = await generateTestPki();
  const issue = (name: string, subject: string, ext: string, o: { issuer?: 'ca' | 'rogue-ca'; days?: number } = {}) =>
    issueCertificate(pki, name, { subject, issuer: o.issuer ?? 'ca', extensions: ext, ...o });
  const [first, second, expired, opsFiles, viewerFiles, strangerFiles, expiredClientFiles, rogueFiles] =
    await Promise.all([
      issue('api-1', '/CN=maintd-api', SERVER_EXT),
      issue('api-2', '/CN=maintd-api', SERVER_EXT),
      issue('api-expired', '/CN=maintd-api', SERVER_EXT, { days: -1 }),
      issue('ops', '/O=maintd-test/OU=on call/CN=ops bot', CLIENT_EXT),
      issue('viewer', '/O=maintd-test/CN=viewer', CLIENT_EXT),
      issue('stranger', '/O=maintd-test/CN=stranger', CLIENT_EXT),
      issue('ops-expired', '/O=maintd-test/OU=on call/CN=ops bot', CLIENT_EXT, { days: -1 }),
      issue('ops-rogue', '/O=maintd-test/OU=on call/CN=ops bot', CLIENT_EXT, { issuer: 'rogue-ca' }),
    ]);
  served = first;
  rotated = second;
  expiredServer = expired;
  [ca, rogueCa, ops, viewer, stranger, expiredClient, rogueClient] = await Promise.all([
    text(pki.caCert),
    text(pki.rogueCaCert),
    pemOf(opsFiles),
    pemOf(viewerFiles),
    pemOf(strangerFiles),
    pemOf(expiredClientFiles),
    pemOf(rogueFiles),
  ]);
  apiCert = join(pki.dir, 'api.crt');
  apiKey = join(pki.dir, 'api.key');
  await Promise.all([copyFile(served.cert, apiCert), copyFile(served.key, apiKey)]);
  tokensFile = join(pki.dir, 'tokens');
  // Subjects as `openssl x509 -noout -subject -nameopt RFC2253` prints them, spaces included.
  await writeFile(
    tokensFile,
    [
      '# client certificates of the TLS fault test',
      'ops-bot operate subject:CN=ops bot,OU=on call,O=maintd-test',
      'viewer read subject:CN=viewer,O=maintd-test',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  await chmod(tokensFile, 0o600);
  etcd = await startEtcd();
});

afterAll(async () => {
  await Promise.all(started.map((c) => c.stop(5000)));
  await etcd?.stop();
  await pki?.remove();
  recordFigures('tls', figures);
});

describe('the master over mutual TLS', () => {
  let master: Daemon;

  beforeAll(async () => {
    master = await startTlsMaster();
  });

  it('serves the API over HTTPS with the configured certificate, and says https:// in its log', async () => {
    const r = await httpsRequest(`${master.url}/api/v1/masters`, { ca, ...ops });
    expect(r.status).toBe(200);
    expect(r.serial).toBe(await serialOf(served.cert));
    const listening = logLines(master.output()).find((l) => String(l.msg).startsWith('maintd listening on'));
    expect(listening?.msg).toBe(`maintd listening on ${master.url}`);
    expect(listening?.tls).toBe('mutual');
  });

  it('refuses a wrong CA, a hostname mismatch, and a missing, expired or foreign client certificate', async () => {
    const attempts: Record<string, TlsClient> = {
      // The client trusts another CA: it cannot verify the master's certificate.
      wrong_ca: { ca: rogueCa, ...ops },
      // The client dials a name the master's certificate does not carry.
      hostname_mismatch: { ca, ...ops, servername: 'master-b.example' },
      // Mutual TLS is on: no certificate, no request.
      missing_client_certificate: { ca },
      expired_client_certificate: { ca, ...expiredClient },
      // The right subject, signed by a CA the master does not trust.
      client_certificate_of_another_ca: { ca, ...rogueClient },
    };
    for (const [name, client] of Object.entries(attempts)) {
      const outcome = await httpsRequest(`${master.url}/api/v1/masters`, client).then(
        (r) => `answered ${r.status}`,
        (err: unknown) => `refused: ${reason(err)}`,
      );
      figures.refused[name] = outcome;
      expect(outcome, name).toMatch(/^refused: /);
    }
    expect(figures.refused.wrong_ca).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|unable to verify/i);
    expect(figures.refused.hostname_mismatch).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
    // The master is unharmed: the next good client gets its answer.
    expect((await httpsRequest(`${master.url}/api/v1/masters`, { ca, ...ops })).status).toBe(200);
  });

  it('lets a certificate mapped to read read but not mutate (403), and one mapped to operate mutate as its name', async () => {
    const park = (client: TlsClient): Promise<HttpsAnswer> =>
      httpsRequest(`${master.url}/api/v1/scheduler/cooldowns/compact/tls-store`, client, {
        method: 'PUT',
        body: JSON.stringify({ reason: 'certificate rotation drill' }),
      });
    expect((await httpsRequest(`${master.url}/api/v1/tasks`, { ca, ...viewer })).status).toBe(200);
    const denied = await park({ ca, ...viewer });
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.text)).toEqual({
      error: 'the client certificate "viewer" has scope read: this needs scope operate',
    });
    // A verified certificate the file does not map is transport trust only: no scope.
    expect((await park({ ca, ...stranger })).status).toBe(401);
    const parked = await park({ ca, ...ops });
    expect(parked.status).toBe(200);
    expect((JSON.parse(parked.text) as { parked?: { by?: string } }).parked?.by).toBe('ops-bot@127.0.0.1');
    // The audit trail names the certificate's mapped name, and only the park that committed.
    const audit = await httpsRequest(`${master.url}/api/v1/audit?target=tls-store`, { ca, ...viewer });
    expect(audit.status).toBe(200);
    const entries = (JSON.parse(audit.text) as { entries: { who: string; client: string; action: string }[] }).entries;
    expect(entries.map((e) => `${e.who}@${e.client} ${e.action}`)).toEqual(['ops-bot@127.0.0.1 cooldown.park']);
    // Neither the subject nor any part of it beyond the name reaches the log.
    expect(master.output()).not.toMatch(/CN=|on call|maintd-test/);
  });

  it('picks up a certificate rotated on disk under steady load for new connections, with no failed request', async () => {
    const oldSerial = await serialOf(served.cert);
    const newSerial = await serialOf(rotated.cert);
    // A keep-alive connection opened before the rotation keeps the certificate it began with.
    // No session cache: a new connection would be a full handshake, never a resumed one.
    const kept = new Agent({ keepAlive: true, maxSockets: 1, maxCachedSessions: 0, ca, cert: ops.cert, key: ops.key });
    // Node shows the peer certificate on a connection's first response only: kept by socket.
    const handshakeSerial = new WeakMap<TLSSocket, string>();
    const onKept = (): Promise<{ serial: string; socket: TLSSocket }> =>
      new Promise((resolve, reject) => {
        get(`${master.url}/healthz`, { agent: kept }, (res) => {
          const socket = res.socket as TLSSocket;
          if (!handshakeSerial.has(socket)) {
            handshakeSerial.set(socket, socket.getPeerX509Certificate()?.serialNumber ?? '');
          }
          const serial = handshakeSerial.get(socket) ?? '';
          expect(res.statusCode).toBe(200);
          res.resume();
          res.on('end', () => resolve({ serial, socket })).on('error', reject);
        }).on('error', reject);
      });
    const before = await onKept();
    expect(before.serial).toBe(oldSerial);

    const CLIENTS = 4;
    const DURATION_MS = 5000;
    const t0 = performance.now();
    let rotatedAt = Number.POSITIVE_INFINITY;
    let firstNewAt: number | null = null;
    const failures: string[] = [];
    const serials = new Map<string, number>();
    const loop = async (): Promise<void> => {
      while (performance.now() - t0 < DURATION_MS) {
        try {
          const r = await httpsRequest(`${master.url}/api/v1/tasks?limit=1`, { ca, ...ops });
          if (r.status !== 200) failures.push(`HTTP ${r.status}`);
          serials.set(r.serial, (serials.get(r.serial) ?? 0) + 1);
          if (r.serial === newSerial && firstNewAt === null) firstNewAt = performance.now();
        } catch (err) {
          failures.push(reason(err));
        }
      }
    };
    const rotate = async (): Promise<void> => {
      await delay(1500);
      rotatedAt = performance.now();
      // As a rotation writes two files: each replaced by a rename, the certificate first. Until
      // the key follows, the pair does not match and the previous one must stay in force.
      await copyFile(rotated.cert, `${apiCert}.new`);
      await rename(`${apiCert}.new`, apiCert);
      await delay(400);
      await copyFile(rotated.key, `${apiKey}.new`);
      await rename(`${apiKey}.new`, apiKey);
    };
    // The kept connection stays in use (an idle one would be closed after the server's keep-alive timeout).
    const keepUsing = async (): Promise<void> => {
      while (performance.now() - t0 < DURATION_MS) {
        await delay(1000);
        expect((await onKept()).socket).toBe(before.socket);
      }
    };
    await Promise.all([...Array.from({ length: CLIENTS }, loop), rotate(), keepUsing()]);

    const metrics = await httpsRequest(`${master.url}/metrics`, { ca, ...ops });
    const reloads = Object.fromEntries(
      [...metrics.text.matchAll(/^master_tls_reloads_total\{result="(\w+)"\} (\d+)$/gm)].map((m) => [
        m[1] ?? '',
        Number(m[2]),
      ]),
    );
    const requests = [...serials.values()].reduce((a, b) => a + b, 0) + failures.length;
    figures.rotation = {
      clients: CLIENTS,
      duration_ms: DURATION_MS,
      requests,
      failed: failures.length,
      old_serial_requests: serials.get(oldSerial) ?? 0,
      new_serial_requests: serials.get(newSerial) ?? 0,
      picked_up_after_ms: firstNewAt === null ? null : Math.round(firstNewAt - rotatedAt),
      reloads,
    };
    expect(failures).toEqual([]);
    expect(serials.get(oldSerial)).toBeGreaterThan(0);
    expect(serials.get(newSerial)).toBeGreaterThan(0);
    expect([...serials.keys()].sort()).toEqual([oldSerial, newSerial].sort());
    expect(reloads.ok).toBeGreaterThanOrEqual(1);
    expect(metrics.text).toMatch(
      new RegExp(
        `^master_tls_certificate_expiry_timestamp_seconds ${Date.parse(new X509Certificate(await text(rotated.cert)).validTo) / 1000}$`,
        'm',
      ),
    );
    // New connections get the new certificate; the one opened before keeps the old.
    expect((await httpsRequest(`${master.url}/healthz`, { ca, ...ops })).serial).toBe(newSerial);
    const after = await onKept();
    expect(after.socket).toBe(before.socket);
    expect(after.serial).toBe(oldSerial);
    kept.destroy();
  });
});

describe('a bad TLS file at start', () => {
  it('stops the master with exit 2, naming the setting and the reason', async () => {
    const cases: Record<string, { env: Record<string, string>; message: RegExp }> = {
      expired_certificate: {
        env: { MASTER_TLS_CERT: expiredServer.cert, MASTER_TLS_KEY: expiredServer.key },
        message: /MASTER_TLS_CERT: '.*api-expired\.crt' has expired/,
      },
      key_of_another_certificate: {
        env: { MASTER_TLS_CERT: served.cert, MASTER_TLS_KEY: rotated.key },
        message: /MASTER_TLS_KEY: '.*api-2\.key' is not the key of the certificate in MASTER_TLS_CERT/,
      },
      missing_client_ca: {
        env: { MASTER_TLS_CERT: served.cert, MASTER_TLS_KEY: served.key, MASTER_TLS_CLIENT_CA: '/nonexistent/ca.pem' },
        message: /MASTER_TLS_CLIENT_CA: '\/nonexistent\/ca\.pem' cannot be read: ENOENT/,
      },
      key_as_certificate: {
        env: { MASTER_TLS_CERT: served.key, MASTER_TLS_KEY: served.key },
        message: /MASTER_TLS_CERT: '.*' holds no PEM certificate/,
      },
    };
    for (const [name, c] of Object.entries(cases)) {
      const { code, out } = await runNode(BIN.maintd, [], {
        ...FAST_MASTER_ENV,
        MASTER_PORT: String(await freePort()),
        ...c.env,
      });
      const fatal = logLines(out)
        .filter((l) => typeof l.level === 'number' && l.level >= 60)
        .map((l) => String(l.msg))
        .join('\n');
      figures.startup_failures[name] = { exit: code, message: fatal };
      expect(code, `${name}: ${out.slice(-2000)}`).toBe(2);
      expect(fatal, name).toMatch(c.message);
      expect(fatal).toMatch(/^cannot serve the API over TLS: /);
      // The key file's content is never printed, only its path.
      expect(out).not.toContain((await text(served.key)).split('\n')[1] ?? 'unreachable');
    }
  });
});

describe('the exporter over mutual TLS', () => {
  it('serves /metrics to a client with a certificate of the client CA, with the certificate’s expiry, and no one else', async () => {
    const port = await freePort();
    const exporter = await startTlsDaemon(
      BIN.exporter,
      {
        EXPORTER_HOST: '127.0.0.1',
        EXPORTER_PORT: String(port),
        ETCD_ENDPOINTS: etcd.clientUrl,
        ETCD_PREFIX: PREFIX,
        EXPORTER_TLS_CERT: served.cert,
        EXPORTER_TLS_KEY: served.key,
        EXPORTER_TLS_CLIENT_CA: pki.caCert,
        LOG_LEVEL: 'debug',
      },
      port,
    );
    const scrape = await httpsRequest(`${exporter.url}/metrics`, { ca, ...viewer });
    expect(scrape.status).toBe(200);
    expect(scrape.text).toMatch(/^maintd_exporter_tls_certificate_expiry_timestamp_seconds \d+$/m);
    expect(scrape.text).toMatch(/^maintd_exporter_tls_reloads_total\{result="ok"\} 0$/m);
    await expect(httpsRequest(`${exporter.url}/metrics`, { ca })).rejects.toThrow();
    await expect(httpsRequest(`${exporter.url}/metrics`, { ca: rogueCa, ...viewer })).rejects.toThrow();
    expect(
      logLines(exporter.output()).some((l) =>
        String(l.msg).startsWith(`maintd-exporter listening on ${exporter.url}/metrics`),
      ),
    ).toBe(true);
  });
});
