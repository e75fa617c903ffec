import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EtcdKv } from '@maintd/core';
import { freePort, startEtcd } from '@maintd/core/testing';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startStubWorker } from '@maintd/scheduler/testing';
import { eventually } from '../test/harness.js';
import { VERSION } from './version.js';
import { settings } from './settings.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '../bin/maintd.js');
const endpoints = inject('etcdEndpoints');

interface Daemon {
  readonly proc: ChildProcess;
  readonly url: string;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

/**
 * Runs the real `maintd` binary with `env` (on top of a minimal environment) and waits until it
 * is ready (`/readyz` 200), or, with `ready: false`, only until it listens (`/healthz` 200).
 */
async function startDaemon(env: Record<string, string>, options: { ready?: boolean } = {}): Promise<Daemon> {
  const port = await freePort();
  const proc = spawn(process.execPath, [BIN], {
    env: {
      PATH: process.env.PATH ?? '',
      MASTER_HOST: '127.0.0.1',
      MASTER_PORT: String(port),
      LOG_LEVEL: 'debug',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (proc.exitCode !== null) throw new Error(`maintd exited early:\n${out}`);
    expect((await fetch(`${url}${options.ready === false ? '/healthz' : '/readyz'}`)).status).toBe(200);
  }, 20_000);
  return { proc, url, output: () => out, exited };
}

/** SIGTERMs the daemon and returns its exit code; fails with its output if it is still there after `ms`. */
async function terminate(d: Daemon, ms = 10_000): Promise<number | null> {
  d.proc.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`maintd had not exited ${ms} ms after SIGTERM:\n${d.output().slice(-4000)}`)),
      ms,
    );
  });
  try {
    return await Promise.race([d.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The JSON log lines of `out` (the binary logs JSON when stdout is not a terminal). */
function logLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Runs `maintd` to completion and returns its exit code and output. */
async function runOnce(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  // 'close', not 'exit': at 'exit' the last output can still be in the pipes, unread.
  const code = await new Promise<number | null>((resolve) => proc.once('close', resolve));
  return { code, out };
}

describe('the maintd binary', () => {
  it('documents every setting in --help and --print-config, redacting secrets', async () => {
    const help = await runOnce(['--help']);
    expect(help.code).toBe(0);
    for (const s of settings) {
      expect(help.out).toContain(s.flag);
      expect(help.out).toContain(s.env);
    }
    const printed = await runOnce(['--print-config'], { MASTER_API_TOKEN: 'tok-123', WORKER_TOKEN: 'wtok-456' });
    expect(printed.code).toBe(0);
    for (const s of settings) expect(printed.out).toMatch(new RegExp(`^${s.env}=`, 'm'));
    expect(printed.out).toContain('MASTER_API_TOKEN=<redacted>');
    expect(printed.out).not.toContain('tok-123');
    expect(printed.out).not.toContain('wtok-456');
  });

  it('refuses a bad setting at startup, naming it, with a non-zero exit', async () => {
    const r = await runOnce([], { TASK_COOLDOWN_JITTER: '1.5' });
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/TASK_COOLDOWN_JITTER \(--task-cooldown-jitter\)/);
  });

  it('refuses a TLS file it cannot read with exit 2, naming the setting', async () => {
    const r = await runOnce([], {
      ETCD_ENDPOINTS: 'https://127.0.0.1:1',
      ETCD_CA_CERT: '/nonexistent/ca.pem',
      MASTER_PORT: String(await freePort()),
    });
    expect(r.code).toBe(2);
    expect(r.out).toMatch(
      /cannot configure the etcd client: ETCD_CA_CERT: cannot read '\/nonexistent\/ca.pem': ENOENT/,
    );
  });

  it('waits for an unreachable etcd alive and not ready, and exits 0 at once on SIGTERM', async () => {
    const etcdPort = await freePort();
    const d = await startDaemon({ ETCD_ENDPOINTS: `http://127.0.0.1:${etcdPort}` }, { ready: false });
    const ready = await fetch(`${d.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, store: 'unavailable' });
    const api = await fetch(`${d.url}/api/v1/tasks`);
    expect(api.status).toBe(503);
    expect(await api.json()).toEqual({ error: 'starting: etcd not reachable yet' });
    await eventually(() => expect(d.output()).toContain('retrying in'));
    // What it cannot know it does not claim: no queue depth before it has read the queue.
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toMatch(/^master_session_held 0$/m);
    expect(metrics).not.toMatch(/^master_task_queue_depth/m);
    const stopAt = performance.now();
    d.proc.kill('SIGTERM');
    expect(await d.exited).toBe(0);
    expect(performance.now() - stopAt).toBeLessThan(3000);
  }, 30_000);

  it('keeps running and ready on SIGHUP, saying that a restart applies new settings, then stops on SIGTERM', async () => {
    const etcd = await startEtcd();
    try {
      const d = await startDaemon({ ETCD_ENDPOINTS: etcd.clientUrl, ETCD_LEASE_TTL_SECS: '5' });
      const ignored = (): unknown[] =>
        logLines(d.output())
          .filter((l) => l.level === 40 && l.signal === 'SIGHUP')
          .map((l) => l.msg);
      // Twice, the second once the first is handled (pending signals coalesce): Node's default for
      // a signal with no listener left would kill it the second time.
      for (const n of [1, 2]) {
        d.proc.kill('SIGHUP');
        await eventually(() => expect(ignored()).toHaveLength(n));
      }
      expect(ignored()[1]).toBe(
        'SIGHUP ignored: maintd reads its settings only when it starts; restart it to apply changes (systemctl restart maintd)',
      );
      expect(d.proc.exitCode).toBeNull();
      expect((await fetch(`${d.url}/readyz`)).status).toBe(200);
      expect(await terminate(d)).toBe(0);
    } finally {
      await etcd.stop();
    }
  }, 30_000);

  it('started before etcd, becomes ready once etcd is up, without a restart, and runs a task', async () => {
    const worker = await startStubWorker((req) =>
      req.path.includes('/merge-wal/')
        ? { status: 200, body: { reclaimed: 5 } }
        : { status: 200, body: { stores: [] } },
    );
    const clientPort = await freePort();
    const etcdUrl = `http://127.0.0.1:${clientPort}`;
    let etcd: Awaited<ReturnType<typeof startEtcd>> | undefined;
    try {
      const d = await startDaemon(
        {
          ETCD_ENDPOINTS: etcdUrl,
          ETCD_PREFIX: `/e2e/${randomUUID()}`,
          ETCD_LEASE_TTL_SECS: '5',
          WORKER_ENDPOINTS: worker.url,
        },
        { ready: false },
      );
      expect((await fetch(`${d.url}/readyz`)).status).toBe(503);
      // Alive and not ready through three failed attempts (about 3 s of backoff), not one.
      const unreachable = (): number =>
        logLines(d.output()).filter((l) => l.level === 40 && String(l.msg).startsWith('etcd not reachable')).length;
      await eventually(() => expect(unreachable()).toBeGreaterThanOrEqual(3), 20_000);
      expect(d.proc.exitCode).toBeNull();
      expect((await fetch(`${d.url}/readyz`)).status).toBe(503);
      etcd = await startEtcd({ clientPort });
      await eventually(async () => expect((await fetch(`${d.url}/readyz`)).status).toBe(200), 30_000);

      const res = await fetch(`${d.url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'merge_wal', target: 'store-1' }),
      });
      expect(res.status).toBe(202);
      const task = (await res.json()) as { id: string };
      await eventually(async () => {
        const t = (await (await fetch(`${d.url}/api/v1/tasks/${task.id}`)).json()) as {
          state: string;
          detail?: string;
        };
        expect(t).toMatchObject({ state: 'done', detail: 'merged 5 generations across 1/1 workers' });
      });

      // One warning per attempt, each naming the endpoint and the cause, the gRPC text cleaned.
      const warnings = logLines(d.output()).filter(
        (l) => l.level === 40 && String(l.msg).startsWith('etcd not reachable'),
      );
      expect(warnings.length).toBeGreaterThanOrEqual(3);
      expect(warnings.map((w) => w.attempt)).toEqual(warnings.map((_, i) => i + 1));
      for (const w of warnings) {
        expect(w.msg).toMatch(
          new RegExp(`^etcd not reachable at ${etcdUrl}: .*ECONNREFUSED.*; retrying in \\d+\\.\\d s$`),
        );
        expect(w.msg).not.toMatch(/Resolution note|UNAVAILABLE/);
      }
      expect(d.proc.exitCode).toBeNull();
      expect(await terminate(d)).toBe(0);
    } finally {
      await etcd?.stop();
      await worker.close();
    }
  }, 90_000);

  it('refuses to run, with exit 2 and its registration gone, in a cluster that switched on a feature it does not understand', async () => {
    const prefix = `/e2e/${randomUUID()}`;
    const kv = new EtcdKv({ endpoints });
    try {
      const record = {
        // A feature of a later release: this one's own (held_tasks) it would understand.
        features: [{ name: 'quarantine', enabled_at: 1, enabled_by: 'newer-1' }],
        preserve_downgrade: false,
        updated_at: 1,
        updated_by: 'newer-1',
      };
      await kv.put(`${prefix}/cluster`, JSON.stringify(record));
      const { code, out } = await runOnce([], {
        ETCD_ENDPOINTS: endpoints.join(','),
        ETCD_PREFIX: prefix,
        MASTER_HOST: '127.0.0.1',
        MASTER_PORT: String(await freePort()),
      });
      expect(code).toBe(2);
      const fatal = logLines(out).find((l) => l.level === 60);
      expect(fatal?.msg).toMatch(
        new RegExp(
          `^this maintd \\(${VERSION.replaceAll('.', '\\.')}\\) is older than its cluster: feature\\(s\\) quarantine are switched on`,
        ),
      );
      // No live master understands it: the record's `enabled_by` is all that names a release.
      expect(fatal?.msg).toContain('install the release newer-1 ran when switching them on, or newer;');
      expect((await kv.range(`${prefix}/masters/`)).count).toBe(0);
      expect(JSON.parse((await kv.get(`${prefix}/cluster`))!.value)).toEqual(record);
    } finally {
      await kv.deletePrefix(`${prefix}/`);
      await kv.close();
    }
  }, 60_000);

  it('on SIGTERM lets a running task finish, revokes its session and exits 0', async () => {
    const worker = await startStubWorker((req) =>
      req.path.includes('/merge-wal/')
        ? { status: 200, body: { reclaimed: 3 }, delayMs: 1500 }
        : { status: 200, body: { stores: [] } },
    );
    const prefix = `/e2e/${randomUUID()}`;
    const kv = new EtcdKv({ endpoints });
    try {
      const d = await startDaemon({
        ETCD_ENDPOINTS: endpoints.join(','),
        ETCD_PREFIX: prefix,
        ETCD_LEASE_TTL_SECS: '5',
        WORKER_ENDPOINTS: worker.url,
      });
      const res = await fetch(`${d.url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'merge_wal', target: 'store-1' }),
      });
      const task = (await res.json()) as { id: string };
      await eventually(async () => {
        const t = (await (await fetch(`${d.url}/api/v1/tasks/${task.id}`)).json()) as { state: string };
        expect(t.state).toBe('running');
      });
      expect((await kv.range(`${prefix}/masters/`)).count).toBe(1);
      d.proc.kill('SIGTERM');
      expect(await d.exited).toBe(0);
      const record = JSON.parse((await kv.get(`${prefix}/tasks/${task.id}`))!.value) as {
        state: string;
        detail: string;
      };
      expect(record).toMatchObject({ state: 'done', detail: 'merged 3 generations across 1/1 workers' });
      expect((await kv.range(`${prefix}/masters/`)).count).toBe(0);
      expect((await kv.range(`${prefix}/claims/`)).count).toBe(0);
      expect(d.output()).toContain('"msg":"stopped"');
    } finally {
      await kv.deletePrefix(`${prefix}/`);
      await kv.close();
      await worker.close();
    }
  }, 60_000);

  it('reports not ready while etcd is down and ready again when it returns, without a restart, in its metrics and in its log', async () => {
    const etcd = await startEtcd();
    let restarted: Awaited<ReturnType<typeof startEtcd>> | undefined;
    const metrics = async (url: string): Promise<string> => (await fetch(`${url}/metrics`)).text();
    try {
      const d = await startDaemon({ ETCD_ENDPOINTS: etcd.clientUrl, ETCD_LEASE_TTL_SECS: '5' });
      expect((await fetch(`${d.url}/readyz`)).status).toBe(200);
      const before = await metrics(d.url);
      expect(before).toMatch(/^master_session_held 1$/m);
      await eventually(async () =>
        expect(await metrics(d.url)).toMatch(/^master_task_queue_depth\{kind="merge_wal"\} 0$/m),
      );
      expect(before).toContain(`master_build_info{version="${VERSION}",node="${process.versions.node}"} 1`);
      await etcd.stop({ keepData: true });
      await eventually(async () => {
        const r = await fetch(`${d.url}/readyz`);
        expect(r.status).toBe(503);
        expect(await r.json()).toMatchObject({ ready: false, store: 'unavailable' });
      }, 20_000);
      // Reads that need etcd answer 503, not 500, and the process stays up.
      expect((await fetch(`${d.url}/api/v1/tasks`)).status).toBe(503);
      // The lease (5 s) lapses without keepalives: the master says it holds no session.
      await eventually(async () => expect(await metrics(d.url)).toMatch(/^master_session_held 0$/m), 20_000);
      restarted = await startEtcd({ dataDir: etcd.dataDir, clientPort: etcd.clientPort, peerPort: etcd.peerPort });
      await eventually(async () => expect((await fetch(`${d.url}/readyz`)).status).toBe(200), 30_000);
      expect(await metrics(d.url)).toMatch(/^master_session_held 1$/m);
      // The outage in the log: a warning when it began and a line when it ended, the loops'
      // failures meanwhile at debug only.
      await eventually(() =>
        expect(logLines(d.output()).some((l) => String(l.msg).startsWith('etcd reachable again after'))).toBe(true),
      );
      const lines = logLines(d.output());
      expect(lines.some((l) => l.level === 40 && String(l.msg).startsWith('etcd unreachable ('))).toBe(true);
      expect(lines.filter((l) => l.level === 40 && String(l.msg).endsWith(' failed'))).toEqual([]);
      // Its session lapsed and came back: at most one warning for the renewals that failed meanwhile.
      expect(lines.some((l) => l.msg === 'session renewed')).toBe(true);
      const renewals = lines.filter((l) => l.msg === 'session renewal failed; retrying');
      expect(renewals.filter((l) => l.level === 40).length).toBeLessThanOrEqual(1);
      expect(renewals.filter((l) => l.level !== 40).length).toBe(Math.max(0, renewals.length - 1));
      expect(d.proc.exitCode).toBeNull();
      expect(await terminate(d)).toBe(0);
    } finally {
      await restarted?.stop();
      await etcd.stop().catch(() => undefined);
    }
  }, 90_000);
});
