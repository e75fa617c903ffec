import { Etcd3 } from 'etcd3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreAccessDeniedError } from '../errors.js';
import type { WatchEvent } from './port.js';
import { EtcdKv } from './etcd.js';
import { type EtcdServer, startEtcd } from '../testing/etcd-server.js';
import { eventually } from '../testing/kv-contract.js';

const PREFIX = '/auth-test/';

/** An etcd with auth on: root, and `maintd` with read-write on {@link PREFIX} only. */
async function startAuthEtcd(): Promise<EtcdServer> {
  const etcd = await startEtcd();
  const admin = new Etcd3({ hosts: etcd.clientUrl });
  try {
    const root = await admin.role('root').create();
    await admin.user('root').create('rootpw');
    await admin.user('root').addRole(root);
    const role = await admin.role('maintd').create();
    await role.grant({ permission: 'Readwrite', range: admin.range({ prefix: PREFIX }) });
    const user = await admin.user('maintd').create('maintdpw');
    await user.addRole(role);
    await admin.auth.authEnable();
  } finally {
    admin.close();
  }
  return etcd;
}

/** Restarts a stopped member on its ports and data dir. */
function restart(etcd: EtcdServer): Promise<EtcdServer> {
  return startEtcd({ dataDir: etcd.dataDir, clientPort: etcd.clientPort, peerPort: etcd.peerPort });
}

describe('EtcdKv with etcd auth', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('tells a key outside the role from refused credentials', async () => {
    const etcd = await startAuthEtcd();
    cleanup.push(() => etcd.stop());
    const kv = new EtcdKv({ endpoints: [etcd.clientUrl], auth: { username: 'maintd', password: 'maintdpw' } });
    cleanup.push(() => kv.close());
    const denied = kv.get('/elsewhere/key');
    await expect(denied).rejects.toThrow(StoreAccessDeniedError);
    await expect(denied).rejects.toThrow(
      /^etcd denied access to the keys under the prefix: .*permission denied \(check that the etcd role of ETCD_USERNAME covers ETCD_PREFIX\)$/,
    );

    const wrong = new EtcdKv({ endpoints: [etcd.clientUrl], auth: { username: 'maintd', password: 'wrong' } });
    cleanup.push(() => wrong.close());
    const refused = wrong.get(`${PREFIX}key`);
    await expect(refused).rejects.toThrow(StoreAccessDeniedError);
    await expect(refused).rejects.toThrow(/^etcd refused the credentials: .*authentication failed/);
  });

  it('keeps every watch delivering, or reporting its loss, after etcd restarts and forgets its tokens', async () => {
    let etcd = await startAuthEtcd();
    cleanup.push(() => etcd.stop());
    const kv = new EtcdKv({ endpoints: [etcd.clientUrl], auth: { username: 'maintd', password: 'maintdpw' } });
    cleanup.push(() => kv.close());

    /** A watch that, told of its loss, opens again: what the scheduler and the exporter do. */
    const follow = async (key: string): Promise<{ seen: Set<string>; losses: () => number }> => {
      const seen = new Set<string>();
      let losses = 0;
      const open = async (): Promise<void> => {
        await kv.watch(
          PREFIX,
          (events: readonly WatchEvent[]) => {
            for (const e of events) if (e.key.startsWith(key)) seen.add(e.value);
          },
          {
            onError: () => {
              losses++;
              void (async () => {
                for (;;) {
                  try {
                    await open();
                    return;
                  } catch {
                    await new Promise((r) => setTimeout(r, 200));
                  }
                }
              })();
            },
          },
        );
      };
      await open();
      return { seen, losses: () => losses };
    };
    const a = await follow(`${PREFIX}a`);
    const b = await follow(`${PREFIX}b`);
    await kv.put(`${PREFIX}a`, 'before');
    await kv.put(`${PREFIX}b`, 'before');
    await eventually(() => Promise.resolve(expect([...a.seen, ...b.seen]).toEqual(['before', 'before'])), 5000);

    // etcd's simple tokens live in memory: after a restart, the ones the client holds are invalid.
    await etcd.stop({ keepData: true });
    etcd = await restart(etcd);

    await eventually(async () => {
      await kv.put(`${PREFIX}a`, 'after');
      await kv.put(`${PREFIX}b`, 'after');
      expect(a.seen.has('after') && b.seen.has('after')).toBe(true);
    }, 20_000);
    // A fresh watch works too, however the old ones came back.
    const c = await follow(`${PREFIX}c`);
    await kv.put(`${PREFIX}c`, 'fresh');
    await eventually(() => Promise.resolve(expect(c.seen.has('fresh')).toBe(true)), 5000);
  }, 60_000);

  it('answers calls again after etcd restarts, when the first call it lets through has a stale token', async () => {
    let etcd = await startAuthEtcd();
    cleanup.push(() => etcd.stop());
    const kv = new EtcdKv({
      endpoints: [etcd.clientUrl],
      auth: { username: 'maintd', password: 'maintdpw' },
      halfOpenAfterMs: 200,
    });
    cleanup.push(() => kv.close());
    await kv.put(`${PREFIX}k`, 'before');

    await etcd.stop({ keepData: true });
    // Three refused calls open the endpoint's circuit.
    for (let i = 0; i < 3; i++) await expect(kv.get(`${PREFIX}k`)).rejects.toThrow(/etcd unavailable/);
    etcd = await restart(etcd);
    await new Promise((r) => setTimeout(r, 300));
    // The half-open trial is refused for its token and retried inside itself by etcd3: it used to
    // wait for its own end, and every call after it for that, until the process restarted.
    expect((await kv.get(`${PREFIX}k`))?.value).toBe('before');
    expect((await kv.get(`${PREFIX}k`))?.value).toBe('before');
  }, 60_000);
});
