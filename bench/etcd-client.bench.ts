/**
 * pnpm bench:etcd-client — what one etcd transaction costs in CPU, on the client and in etcd, through
 * the client maintd uses (etcd3 over gRPC, grpc-js) and through etcd's own JSON gateway
 * (`POST /v3/kv/txn`) with a pooled undici client. grpc-js is the largest single share of a
 * master's CPU per task (docs/SCALING.md), and the gateway is the one way to reach etcd without it;
 * this bench answers whether switching would save CPU or only move it into etcd. Both run the same
 * CAS on their own keys, alternated in rounds at 1, 4 and 16 in flight; client CPU is this
 * process's, etcd's is its `process_cpu_seconds_total`. Printed: the median round's CPU ms per
 * transaction and the gateway's ratio to gRPC in those rounds, client alone and client plus etcd.
 */
import { randomUUID } from 'node:crypto';
import { startEtcd } from '@maintd/core/testing';
import { Etcd3 } from 'etcd3';
import { Pool } from 'undici';

const TXNS = Number(process.env.BENCH_TXNS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IN_FLIGHT = [1, 4, 16];
const KEYS = 64;
const VALUE = 'x'.repeat(200);

interface Cost {
  readonly clientMs: number;
  readonly etcdMs: number;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

async function etcdCpuMs(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith('process_cpu_seconds_total '));
  if (!line) throw new Error('etcd /metrics has no process_cpu_seconds_total');
  return Number(line.slice(line.lastIndexOf(' ') + 1)) * 1000;
}

/** Runs `txn` TXNS times with `inFlight` callers and returns CPU ms per transaction. */
async function measure(metricsUrl: string, inFlight: number, txn: (n: number) => Promise<void>): Promise<Cost> {
  let next = 0;
  const etcd0 = await etcdCpuMs(metricsUrl);
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < TXNS) await txn(next++);
    }),
  );
  const { user, system } = process.cpuUsage(cpu0);
  const etcd1 = await etcdCpuMs(metricsUrl);
  return { clientMs: (user + system) / 1000 / TXNS, etcdMs: (etcd1 - etcd0) / TXNS };
}

const total = (c: Cost): number => c.clientMs + c.etcdMs;

/** The round whose client plus etcd CPU is the median. */
const median = (xs: Cost[]): Cost => {
  const sorted = [...xs].sort((a, b) => total(a) - total(b));
  const mid = sorted[Math.floor(sorted.length / 2)];
  if (!mid) throw new Error('no rounds');
  return mid;
};

const etcd = await startEtcd();
const metricsUrl = `${etcd.clientUrl}/metrics`;
const client = new Etcd3({ hosts: [etcd.clientUrl] });
const pool = new Pool(etcd.clientUrl, { connections: 4 });
const prefix = `/bench/etcd-client/${randomUUID()}`;
try {
  // The compare (ModRevision > -1) always holds: both sides pay for a compare and a put, never a retry.
  const viaGrpc = async (n: number): Promise<void> => {
    const key = `${prefix}/grpc/${n % KEYS}`;
    const res = await client.if(key, 'Mod', '>', -1).then(client.put(key).value(VALUE)).commit();
    if (!res.succeeded) throw new Error('gRPC transaction did not succeed');
  };
  const viaGateway = async (n: number): Promise<void> => {
    const key = b64(`${prefix}/gateway/${n % KEYS}`);
    const body = JSON.stringify({
      compare: [{ key, target: 'MOD', result: 'GREATER', mod_revision: '-1' }],
      success: [{ request_put: { key, value: b64(VALUE) } }],
    });
    const res = await pool.request({
      path: '/v3/kv/txn',
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    const reply = (await res.body.json()) as { succeeded?: boolean };
    if (res.statusCode !== 200 || reply.succeeded !== true) throw new Error(`gateway answered ${res.statusCode}`);
  };
  // Warm both paths (connections, JIT) before anything is counted.
  await measure(metricsUrl, 4, viaGrpc);
  await measure(metricsUrl, 4, viaGateway);

  console.log(`etcd transaction CPU, ${TXNS} transactions a round, median of ${ROUNDS} alternated rounds\n`);
  console.log(
    '| in flight | gRPC client ms | gRPC etcd ms | gateway client ms | gateway etcd ms | gateway / gRPC, client | gateway / gRPC, client + etcd |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const inFlight of IN_FLIGHT) {
    const grpc: Cost[] = [];
    const gateway: Cost[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      grpc.push(await measure(metricsUrl, inFlight, viaGrpc));
      gateway.push(await measure(metricsUrl, inFlight, viaGateway));
    }
    // Each side's median round by its total; both ratios are of the rounds printed.
    const g = median(grpc);
    const w = median(gateway);
    console.log(
      `| ${inFlight} | ${g.clientMs.toFixed(3)} | ${g.etcdMs.toFixed(3)} | ${w.clientMs.toFixed(3)} | ${w.etcdMs.toFixed(3)} | ${(w.clientMs / g.clientMs).toFixed(2)} | ${(total(w) / total(g)).toFixed(2)} |`,
    );
  }
} finally {
  await client.delete().prefix(prefix);
  client.close();
  await pool.close();
  await etcd.stop();
}
