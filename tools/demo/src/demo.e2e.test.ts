import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StoreStats, TaskCooldown, TaskRecord } from '@maintd/core';
import { eventually as retryUntil, freePort } from '@maintd/core/testing';
import { describe, expect, it } from 'vitest';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '../bin/demo.js');

const eventually = <T>(check: () => Promise<T>, timeoutMs: number): Promise<T> => retryUntil(check, timeoutMs, 250);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the demo', () => {
  it('cools down exactly the broken stores after the threshold while healthy stores get merged, and stops cleanly', async () => {
    const port = await freePort();
    // MASTER_PORT, as the master reads it, picks the port when --port is not given.
    const demo = spawn(process.execPath, [BIN, '--stores=24', '--broken=3', '--seed=2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MASTER_PORT: String(port) },
    });
    let out = '';
    demo.stdout.on('data', (d: Buffer) => (out += d.toString()));
    demo.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}`;
    const get = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${url}${path}`);
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      return (await res.json()) as T;
    };
    try {
      const first = await eventually(async () => {
        const { stores } = await get<{ stores: (StoreStats & { cooldowns: TaskCooldown[] })[] }>(
          '/api/v1/stores?limit=200',
        );
        expect(stores.length).toBe(24);
        // A loaded machine may see the first scan's rows before every worker's reply is in.
        expect(stores.filter((s) => s.name.startsWith('broken-'))).toHaveLength(3);
        return stores;
      }, 30_000);
      const broken = first.filter((s) => s.name.startsWith('broken-')).map((s) => s.name);
      expect(broken).toHaveLength(3);
      const healthyPending = (rows: StoreStats[]): number =>
        rows.filter((r) => !r.name.startsWith('broken-')).reduce((n, r) => n + r.pending_wal_generations, 0);

      // Merges only: a broken store with enough fragments also fails compactions, and that
      // cooldown can reach the threshold before its merges' (seed 2: broken-21 has 13 fragments).
      const cooling = await eventually(async () => {
        const list = await get<TaskCooldown[]>('/api/v1/scheduler/cooldowns?kind=merge_wal');
        expect(list.map((c) => c.target).sort()).toEqual([...broken].sort());
        return list;
      }, 60_000);
      for (const c of cooling) expect([c.kind, c.failures]).toEqual(['merge_wal', 3]);
      for (const name of broken) {
        const { tasks } = await get<{ tasks: TaskRecord[] }>(`/api/v1/tasks?target=${name}&kind=merge_wal&limit=50`);
        expect(tasks.filter((t) => t.state === 'failed')).toHaveLength(3);
        expect(tasks.filter((t) => t.state === 'queued' || t.state === 'running')).toHaveLength(0);
      }
      const now = await get<{ stores: StoreStats[] }>('/api/v1/stores?limit=200');
      expect(healthyPending(now.stores)).toBeLessThan(healthyPending(first));
      const done = await get<{ tasks: TaskRecord[] }>('/api/v1/tasks?state=done&limit=200');
      expect(done.tasks.some((t) => t.kind === 'merge_wal' && /merged [1-9]\d* generations/.test(t.detail ?? ''))).toBe(
        true,
      );
      // Readable logs: the master's lines pretty (levels as words, one line per task outcome, the
      // cooldown marked), the workers' summary in words.
      await eventually(() => Promise.resolve(expect(out).toMatch(/ WARN: +COOLDOWN +merge_wal broken-/)), 10_000);
      expect(out).toMatch(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: merge_wal [\w.-]+ done in [\d.]+ (s|min): merged \d+ generations/m,
      );
      expect(out).toMatch(/^\[workers\] 3 simulated workers listening, 24 stores \(broken: broken-/m);
      expect(out).not.toMatch(/^\{"level"/m);
    } finally {
      const children = execFileSync('pgrep', ['-P', String(demo.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number);
      expect(children.length).toBe(2);
      demo.kill('SIGINT');
      await exited;
      await eventually(() => Promise.resolve(expect(children.filter(alive)).toEqual([])), 15_000);
    }
  }, 120_000);
});

describe('the demo on a port that is taken', () => {
  it('says which port to use instead, in one line, and exits 1 without starting anything', async () => {
    const port = await freePort();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      for (const [args, env] of [
        [[`--port=${port}`], {}],
        [[], { MASTER_PORT: String(port) }],
      ] as const) {
        const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
        expect(r.status).toBe(1);
        expect(r.stderr).toBe(
          `demo: port ${port} is in use: pnpm demo --port ${port + 1} (or MASTER_PORT=${port + 1} pnpm demo)\n`,
        );
        expect(r.stdout).toBe('');
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('refuses a port that is not one, exit 2', () => {
    const r = spawnSync(process.execPath, [BIN], { encoding: 'utf8', env: { ...process.env, MASTER_PORT: 'eighty' } });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^demo: MASTER_PORT must be a whole number from 1 to 65535, got "eighty"/);
  });
});
