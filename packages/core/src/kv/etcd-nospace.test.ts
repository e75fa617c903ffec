import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreFullError, StoreUnavailableError } from '../errors.js';
import { EtcdKv } from './etcd.js';
import { startEtcd } from '../testing/etcd-server.js';

/** The smallest quota that still lets etcd start, so that a few puts fill it. */
const QUOTA_BYTES = 16 * 1024 * 1024;
/** Under etcd's default request limit (1.5 MiB). */
const JUNK_BYTES = 1024 * 1024;

describe('EtcdKv against an etcd out of space', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('fails writes with StoreFullError saying what to do, keeps reads working, and writes again once an operator compacted, defragmented and disarmed etcd', async () => {
    const etcd = await startEtcd({ extraArgs: [`--quota-backend-bytes=${QUOTA_BYTES}`] });
    cleanup.push(() => etcd.stop());
    // etcd3's default breaker opens on the failed puts: the runbook below uses a fresh client.
    const filler = new Etcd3({ hosts: etcd.clientUrl });
    cleanup.push(() => Promise.resolve(filler.close()));
    const kv = new EtcdKv({ endpoints: [etcd.clientUrl] });
    cleanup.push(() => kv.close());
    await kv.put('/full/kept', 'before');

    // Random bytes do not compress: each put takes its size in the backend.
    let raised = false;
    for (let i = 0; i < 64 && !raised; i++) {
      try {
        await filler.put(`/junk/${i}`).value(randomBytes(JUNK_BYTES).toString('base64').slice(0, JUNK_BYTES));
      } catch (err) {
        expect(String(err)).toMatch(/database space exceeded/);
        raised = true;
      }
    }
    expect(raised).toBe(true);

    // More failed writes than the breaker's three: reads must still be let through.
    for (let i = 0; i < 5; i++) await expect(kv.put('/full/new', 'x')).rejects.toThrow(StoreFullError);
    expect((await kv.get('/full/kept'))?.value).toBe('before');
    const write = kv.put('/full/new', 'x');
    await expect(write).rejects.toThrow(StoreFullError);
    // Every caller that retries an unavailable store retries this too.
    await expect(write).rejects.toThrow(StoreUnavailableError);
    await expect(write).rejects.toThrow(
      /^etcd is out of space \(NOSPACE alarm: .*database space exceeded\) and refuses writes until it is compacted, defragmented and the alarm disarmed$/,
    );
    await expect(
      kv.txn(
        [{ key: '/full/kept', target: 'value', op: '==', value: 'before' }],
        [{ type: 'put', key: '/full/kept', value: 'y' }],
      ),
    ).rejects.toThrow(StoreFullError);
    expect((await kv.get('/full/kept'))?.value).toBe('before');

    // docs/DEPLOY.md's runbook: free space, compact, defragment, disarm.
    const admin = new Etcd3({ hosts: etcd.clientUrl });
    cleanup.push(() => Promise.resolve(admin.close()));
    await admin.delete().prefix('/junk/');
    const { header } = await admin.get('/full/kept').exec();
    await admin.kv.compact({ revision: header.revision, physical: true });
    await admin.maintenance.defragment();
    const { alarms } = await admin.maintenance.alarm({ action: 'Get' });
    for (const a of alarms)
      await admin.maintenance.alarm({ action: 'Deactivate', memberID: a.memberID, alarm: a.alarm });
    await kv.put('/full/new', 'after');
    expect((await kv.get('/full/new'))?.value).toBe('after');
  });
});
