import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { freePort, startEtcd, type EtcdServer } from '@maintd/core/testing';
import {
  BIN,
  type Child,
  type Master,
  type SimWorkers,
  eventually,
  spawnNode,
  startMaster,
  startSimWorkers,
} from '@maintd/faults/harness/processes';
import { inspectorUrl } from './inspector.js';

/** The shape of issue #45's soak: 300 stores, 12 of them broken. */
export const STORES = 300;
export const BROKEN = 12;

/** The kind whose maintenance window opens and closes during the run. */
export const WINDOWED_KIND = 'index_id';

/**
 * The masters' settings: the busy fleet of issue #45 (sweeps every 2 s, compaction every 4 s, a
 * cooldown base of 5 s up to 40 s, a guard at 50 %, short histories), so that an hour of it
 * carries what months of a quieter fleet would.
 */
export const SOAK_MASTER_ENV: Readonly<Record<string, string>> = {
  ETCD_LEASE_TTL_SECS: '10',
  STATS_SCAN_INTERVAL_SECS: '2',
  MERGE_WAL_INTERVAL_SECS: '2',
  COMPACTION_INTERVAL_SECS: '4',
  MERGE_WAL_MIN_GENERATIONS: '2',
  MIN_FRAGMENTS: '12',
  TASK_COOLDOWN_BASE_SECS: '5',
  TASK_COOLDOWN_MAX_SECS: '40',
  TASK_COOLDOWN_MAX_PERCENT: '50',
  TASK_HISTORY_LIMIT: '1000',
  TASK_TIMELINE_LIMIT: '10',
  AUDIT_LIMIT: '10000',
  WORKER_TIMEOUT_SECS: '10',
  LOG_LEVEL: 'warn',
};

const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);

/**
 * `TASK_WINDOWS` for {@link WINDOWED_KIND}: open `openMin` minutes, closed as long, from the next
 * whole minute after `startMs` to `endMs` (UTC, the master's default zone).
 */
export function alternatingWindows(startMs: number, endMs: number, openMin = 2): string {
  const minute = 60_000;
  const parts: string[] = [];
  const first = Math.ceil(startMs / minute) * minute + minute;
  // At least one window, however short the run.
  for (let t = first; t === first || t < endMs; t += 2 * openMin * minute) {
    parts.push(`${hhmm(t)}-${hhmm(t + openMin * minute)}`);
  }
  return `${WINDOWED_KIND}=${parts.join(';')}`;
}

/** A daemon the soak samples: its process and its inspector's URL. */
export interface Daemon {
  readonly name: string;
  readonly child: Child;
  readonly inspector: string;
  /** Its HTTP base URL (API and `/metrics`). */
  readonly url: string;
}

/** Everything the soak runs. */
export interface Fleet {
  readonly etcd: EtcdServer;
  readonly prefix: string;
  readonly workers: SimWorkers;
  readonly masters: readonly (Daemon & { readonly master: Master })[];
  readonly exporter: Daemon;
  stop(): Promise<void>;
}

// The inspector on a free port of loopback: the sampler forces collections and takes snapshots
// through it (src/inspector.ts).
const INSPECT = { NODE_OPTIONS: '--inspect=127.0.0.1:0' };

const withInspector = async (name: string, child: Child, url: string): Promise<Daemon> => {
  const inspector = await eventually(() => {
    const found = inspectorUrl(child.output());
    if (!found) throw new Error(`${name}: no inspector URL yet`);
    return found;
  });
  return { name, child, url, inspector };
};

/** Starts `maintd-exporter` on a free port; resolves once `/healthz` answers. */
async function startExporter(env: Record<string, string>): Promise<Daemon> {
  const port = await freePort();
  const child = spawnNode(BIN.exporter, [], {
    EXPORTER_HOST: '127.0.0.1',
    EXPORTER_PORT: String(port),
    LOG_LEVEL: 'warn',
    ...INSPECT,
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (!child.running()) throw new Error(`maintd-exporter exited early:\n${child.output().slice(-4000)}`);
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    if (res.status !== 200) throw new Error(`maintd-exporter not serving: ${res.status}`);
  });
  return withInspector('exporter', child, url);
}

/** Where etcd's warnings of a run are kept, in its out dir. */
export const ETCD_LOG = 'etcd.log';

/**
 * Starts etcd, the simulated workers, masters `a` and `b` and an exporter for a run ending at
 * `endMs`; etcd writes its warnings to {@link ETCD_LOG} in `outDir`.
 */
export async function startFleet(startMs: number, endMs: number, outDir: string): Promise<Fleet> {
  // A master's 503 (etcd unavailable) can only be placed beside etcd's own account of that
  // moment (a slow disk sync, an apply that took too long); the test default keeps errors only.
  const etcd = await startEtcd({ extraArgs: ['--log-level', 'warn', '--log-outputs', join(outDir, ETCD_LOG)] });
  const prefix = `/soak/${randomUUID()}`;
  const workers = await startSimWorkers(['--workers', '3', '--stores', String(STORES), '--broken', String(BROKEN)]);
  const env = {
    ...SOAK_MASTER_ENV,
    ...INSPECT,
    ETCD_ENDPOINTS: etcd.clientUrl,
    ETCD_PREFIX: prefix,
    WORKER_ENDPOINTS: workers.endpoints.join(','),
    TASK_WINDOWS: alternatingWindows(startMs, endMs),
  };
  const masters = await Promise.all(
    ['a', 'b'].map(async (id) => {
      const master = await startMaster(env, { id: `soak-${id}` });
      return { ...(await withInspector(`master ${id}`, master, master.url)), master };
    }),
  );
  const exporter = await startExporter({ ETCD_ENDPOINTS: etcd.clientUrl, ETCD_PREFIX: prefix });
  return {
    etcd,
    prefix,
    workers,
    masters,
    exporter,
    stop: async () => {
      await Promise.all([...masters.map((m) => m.child.stop()), exporter.child.stop()]);
      await workers.stop();
      await etcd.stop();
    },
  };
}
