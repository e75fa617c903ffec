import { X509Certificate } from 'node:crypto';
import type { CooldownView } from '@maintd/api';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { selfSigned } from '../../test/certificates.js';
import { FakeClock, type TestMaster, jsonBody, openMaster } from '../../test/harness.js';
import { type ApiToken, tokenDigest } from '../auth/api-token.js';

const endpoints = inject('etcdEndpoints');

const TOKENS = { alice: 'alice-operate-s3cret', reader: 'reader-read-s3cret', dflt: 'default-s3cret' } as const;
const named: readonly ApiToken[] = [
  { name: 'alice', scope: 'operate', digest: tokenDigest(TOKENS.alice) },
  { name: 'grafana', scope: 'read', digest: tokenDigest(TOKENS.reader) },
];
const remote = { incoming: { socket: { remoteAddress: '10.1.2.3' } } };
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

let m: TestMaster | undefined;
let clock: FakeClock;
afterEach(async () => {
  await m?.close();
  m = undefined;
});

/** A master with MASTER_API_TOKEN (as `default`) and two named tokens, reads as `reads` says. */
async function open(reads: 'open' | 'token' = 'open'): Promise<TestMaster> {
  clock = new FakeClock();
  m = await openMaster(endpoints, clock, { apiToken: TOKENS.dflt, apiReads: reads }, 1, (kv) => kv, {
    tokens: () => [{ name: 'default', scope: 'operate', digest: tokenDigest(TOKENS.dflt) }, ...named],
  });
  return m;
}

const failures = async (master: TestMaster): Promise<Record<string, number>> => {
  const metric = await master.metrics.apiAuthFailures.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.reason), v.value]));
};

describe('API authentication with named tokens', () => {
  it('lets a read token read but not mutate (403 naming operate), and an operate token do both', async () => {
    const master = await open();
    const body = { kind: 'compact', target: 'store-1' };
    const denied = await master.app.request('/api/v1/tasks', jsonBody(body, bearer(TOKENS.reader)), remote);
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ error: 'the token "grafana" has scope read: this needs scope operate' });
    expect((await master.app.request('/api/v1/tasks', { headers: bearer(TOKENS.reader) }, remote)).status).toBe(200);
    for (const token of [TOKENS.alice, TOKENS.dflt]) {
      const res = await master.app.request('/api/v1/tasks', jsonBody(body, bearer(token)), remote);
      expect(res.status).toBeLessThan(300);
    }
    expect(await failures(master)).toMatchObject({ scope: 1, missing: 0, unknown: 0, query_token: 0 });
  });

  it('answers 401 naming the scope needed to a missing or unknown token, never echoing it', async () => {
    const master = await open();
    const post = async (headers: Record<string, string>): Promise<Response> =>
      master.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 's' }, headers), remote);
    for (const res of [await post({}), await post(bearer('unknown-s3cret')), await post(bearer(`${TOKENS.alice}x`))]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.text()).toBe('{"error":"missing or invalid bearer token: this needs a token of scope operate"}');
    }
    expect(await failures(master)).toMatchObject({ missing: 1, unknown: 2 });
  });

  it('keeps reads open by default, and needs a read or operate token for them with MASTER_API_READS=token', async () => {
    const open_ = await open();
    expect((await open_.app.request('/api/v1/tasks', {}, remote)).status).toBe(200);
    await open_.close();
    m = undefined;
    const master = await open('token');
    const refused = await master.app.request('/api/v1/tasks', {}, remote);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      error: 'missing or invalid bearer token: this needs a token of scope read',
    });
    expect((await master.app.request('/api/v1/masters', { headers: bearer('nope') }, remote)).status).toBe(401);
    for (const token of [TOKENS.reader, TOKENS.alice, TOKENS.dflt]) {
      expect((await master.app.request('/api/v1/tasks', { headers: bearer(token) }, remote)).status).toBe(200);
    }
    // A tokens file emptied at runtime closes reads rather than opening them.
    const none = await openMaster(endpoints, new FakeClock(), { apiReads: 'token' }, 2, (kv) => kv, {
      tokens: () => [],
    });
    try {
      expect((await none.request('/api/v1/tasks')).status).toBe(401);
    } finally {
      await none.close();
    }
    // Probes, metrics and the API's own description stay open.
    for (const path of ['/healthz', '/metrics', '/api/v1/openapi.json']) {
      expect((await master.app.request(path, {}, remote)).status, path).toBe(200);
    }
  });

  it('refuses a token in the query string with 400 naming the parameter, whatever the token', async () => {
    const master = await open();
    for (const param of ['token', 'access_token']) {
      const res = await master.app.request(`/api/v1/tasks?${param}=${TOKENS.alice}`, {}, remote);
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        error: `a token in the query string (?${param}=) is refused: send it in the Authorization header`,
      });
      expect(text).not.toContain(TOKENS.alice);
    }
    expect(await failures(master)).toMatchObject({ query_token: 2 });
  });

  it('names the token by its name and the client address in a park and on the timeline', async () => {
    const master = await open();
    const park = await master.app.request(
      '/api/v1/scheduler/cooldowns/compact/store-9',
      {
        method: 'PUT',
        body: JSON.stringify({ reason: 'disk swap' }),
        headers: { 'content-type': 'application/json', ...bearer(TOKENS.alice) },
      },
      remote,
    );
    expect(park.status).toBe(200);
    expect(((await park.json()) as CooldownView).parked?.by).toBe('alice@10.1.2.3');
    await master.app.request(
      '/api/v1/tasks',
      jsonBody({ kind: 'compact', target: 'store-9' }, bearer(TOKENS.dflt)),
      remote,
    );
    const detail = await master.app.request('/api/v1/scheduler/cooldowns/compact/store-9', {}, remote);
    const text = await detail.text();
    const timeline = (JSON.parse(text) as { timeline: { type: string; by?: string }[] }).timeline;
    expect(timeline.map((e) => [e.type, e.by])).toEqual(
      expect.arrayContaining([
        ['parked', 'alice@10.1.2.3'],
        ['manual_run', 'default@10.1.2.3'],
      ]),
    );
    for (const token of Object.values(TOKENS)) expect(text).not.toContain(token);
  });

  it('logs a client’s failed attempts at most once a minute, without the token', async () => {
    const master = await open();
    const post = async (): Promise<Response> =>
      master.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 's' }, bearer('wrong-s3cret')), remote);
    const refusals = (): Record<string, unknown>[] =>
      master.logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('API request refused'));
    await post();
    await post();
    expect(refusals()).toHaveLength(1);
    expect(refusals()[0]).toMatchObject({
      client: '10.1.2.3',
      reason: 'unknown',
      method: 'POST',
      path: '/api/v1/tasks',
    });
    await master.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 's' }), {
      incoming: { socket: { remoteAddress: '10.9.9.9' } },
    });
    expect(refusals()).toHaveLength(2);
    await clock.advance(60_000);
    await post();
    expect(refusals()).toHaveLength(3);
    expect(JSON.stringify(master.logs)).not.toContain('wrong-s3cret');
    expect(await failures(master)).toMatchObject({ unknown: 3, missing: 1 });
  });
});

describe('API authentication with client certificates', () => {
  /** A request's bindings over a TLS connection whose verified client certificate is `pem`. */
  const overTls = (pem: string, authorized = true) => {
    const cert = new X509Certificate(pem);
    return {
      incoming: {
        socket: { remoteAddress: '10.9.8.7', authorized, getPeerX509Certificate: () => cert },
      },
    };
  };

  async function withSubjects(reads: 'open' | 'token' = 'open'): Promise<TestMaster> {
    m = await openMaster(endpoints, new FakeClock(), { apiReads: reads }, 3, (kv) => kv, {
      tokens: () => named,
      subjects: () => [
        { name: 'ops-bot', scope: 'operate', subject: 'CN=ops bot,O=example' },
        { name: 'viewer', scope: 'read', subject: 'CN=viewer,O=example' },
      ],
    });
    return m;
  }

  it('gives a mapped certificate its name and scope: read cannot mutate (403), operate can, as name@address', async () => {
    const [ops, viewer] = await Promise.all([selfSigned('/O=example/CN=ops bot'), selfSigned('/O=example/CN=viewer')]);
    const master = await withSubjects('token');
    const body = { kind: 'compact', target: 'store-c' };
    const denied = await master.app.request('/api/v1/tasks', jsonBody(body), overTls(viewer.pem));
    expect(denied.status).toBe(403);
    const text = await denied.text();
    expect(JSON.parse(text)).toEqual({
      error: 'the client certificate "viewer" has scope read: this needs scope operate',
    });
    expect(text).not.toContain('CN=');
    expect((await master.app.request('/api/v1/tasks', {}, overTls(viewer.pem))).status).toBe(200);
    const park = await master.app.request(
      '/api/v1/scheduler/cooldowns/compact/store-c',
      { method: 'PUT', body: JSON.stringify({ reason: 'mtls' }), headers: { 'content-type': 'application/json' } },
      overTls(ops.pem),
    );
    expect(park.status).toBe(200);
    expect(((await park.json()) as CooldownView).parked?.by).toBe('ops-bot@10.9.8.7');
  });

  it('treats an unmapped or unverified certificate as no credential, and a presented token as today', async () => {
    const [stranger, ops] = await Promise.all([selfSigned('/CN=stranger'), selfSigned('/O=example/CN=ops bot')]);
    const master = await withSubjects('token');
    const post = (env: object, headers: Record<string, string> = {}) =>
      master.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 's' }, headers), env);
    expect((await post(overTls(stranger.pem))).status).toBe(401);
    expect((await master.app.request('/api/v1/tasks', {}, overTls(stranger.pem))).status).toBe(401);
    expect((await post(overTls(ops.pem, false))).status).toBe(401);
    // The token decides when one is presented: a read token over an operate certificate is refused.
    expect((await post(overTls(ops.pem), bearer(TOKENS.reader))).status).toBe(403);
    expect((await post(overTls(ops.pem), bearer('wrong'))).status).toBe(401);
    expect((await post(overTls(stranger.pem), bearer(TOKENS.alice))).status).toBe(202);
    expect(await failures(master)).toMatchObject({ missing: 3, unknown: 1, scope: 1 });
  });

  it('needs a credential from a remote client once only subjects are configured', async () => {
    m = await openMaster(endpoints, new FakeClock(), {}, 4, (kv) => kv, {
      tokens: () => [],
      subjects: () => [{ name: 'ops-bot', scope: 'operate', subject: 'CN=ops' }],
    });
    const res = await m.app.request('/api/v1/tasks', jsonBody({ kind: 'compact', target: 's' }), remote);
    expect(res.status).toBe(401);
  });
});
