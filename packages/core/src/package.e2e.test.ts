import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(pkgDir, '../..');
const bin = (name: string): string => join(repoRoot, 'node_modules/.bin', name);

/**
 * Packs @maintd/core as it would be published, unpacks it into a scratch project that has only
 * the package's runtime dependencies, and imports it from plain Node ESM and from TypeScript.
 */
describe('the packed @maintd/core tarball', () => {
  let scratch: string;
  let tarball: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'maintd-pack-'));
    const { stdout } = await run('pnpm', ['pack', '--pack-destination', scratch], { cwd: pkgDir });
    tarball = stdout.trim().split('\n').at(-1)!;
    const installed = join(scratch, 'node_modules/@maintd/core');
    await mkdir(installed, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    const manifest = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    // Runtime dependencies, plus vitest: the peer a consumer of the testing subpath installs.
    for (const dep of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]) {
      const to = join(scratch, 'node_modules', dep);
      await mkdir(dirname(to), { recursive: true });
      await symlink(join(pkgDir, 'node_modules', dep), to);
    }
    await symlink(join(repoRoot, 'node_modules/@types'), join(scratch, 'node_modules/@types'));
  }, 120_000);
  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('ships only dist and docs', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n');
    expect(files.every((f) => /^package\/(dist\/|package\.json$|README\.md$|CHANGELOG\.md$)/.test(f))).toBe(true);
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files.some((f) => f.includes('.test.'))).toBe(false);
  });

  it('imports in plain Node ESM, main entry and testing subpath', async () => {
    const script = [
      "import { TaskStore, MemoryKv, FakeClock, cooldownWindowMs, DEFAULT_COOLDOWN_POLICY } from '@maintd/core';",
      "import { kvContract, taskStoreContract, memoryHarness } from '@maintd/core/testing';",
      'const clock = new FakeClock();',
      "const store = await TaskStore.open({ kv: new MemoryKv({ clock }), clock, masterId: 'm' });",
      "const { task } = await store.enqueue('compact', 'store-1');",
      'await store.close();',
      "console.log(JSON.stringify({ state: task.state, w: cooldownWindowMs(DEFAULT_COOLDOWN_POLICY, 'compact', 's', 3) > 0, fns: [typeof kvContract, typeof taskStoreContract, typeof memoryHarness] }));",
      'process.exit(0);',
    ].join('\n');
    await writeFile(join(scratch, 'smoke.mjs'), script);
    const { stdout } = await run('node', ['smoke.mjs'], { cwd: scratch });
    expect(JSON.parse(stdout)).toEqual({ state: 'queued', w: true, fns: ['function', 'function', 'function'] });
  });

  // A full tsc run over the published .d.ts files and @types/node (skipLibCheck off) took 28–30 s,
  // past the default timeout, with other packages' tests sharing the two cores.
  const typeCheck = { timeout: 120_000 };
  it.each(['node16', 'bundler'])('type-checks a consumer with moduleResolution %s', typeCheck, async (resolution) => {
    const dir = join(scratch, `ts-${resolution}`);
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          target: 'ES2022',
          module: resolution === 'node16' ? 'node16' : 'esnext',
          moduleResolution: resolution,
          types: ['node'],
        },
        include: ['consumer.mts'],
      }),
    );
    await writeFile(
      join(dir, 'consumer.mts'),
      [
        "import { type TaskCooldown, type Kv, TaskStore, MemoryKv, nextCooldown, DEFAULT_COOLDOWN_POLICY } from '@maintd/core';",
        "import { FakeClock, taskStoreContract } from '@maintd/core/testing';",
        'const kv: Kv = new MemoryKv({ clock: new FakeClock() });',
        "const d = nextCooldown(DEFAULT_COOLDOWN_POLICY, undefined, { kind: 'compact', target: 's', taskId: 't', error: 'e', errorClass: 'target' }, 0);",
        "const c: TaskCooldown | undefined = d.action === 'write' ? d.record : undefined;",
        'export const used = [kv, c, TaskStore.open, taskStoreContract];',
      ].join('\n'),
    );
    // skipLibCheck is off: the published .d.ts files themselves must check.
    await run(bin('tsc'), ['-p', dir], { cwd: dir }).catch((err: Error & { stdout?: string }) => {
      throw new Error(`tsc failed:\n${err.stdout ?? err.message}`, { cause: err });
    });
  });

  it('resolves its types for every modern resolution (@arethetypeswrong, ESM-only profile)', async () => {
    const { stdout } = await run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'ascii'], {
      cwd: pkgDir,
    }).catch((err: Error & { stdout?: string }) => {
      throw new Error(`attw found problems:\n${err.stdout ?? err.message}`, { cause: err });
    });
    // attw exits non-zero on any problem; the two resolutions that matter must both be green.
    expect(stdout).toMatch(/node16 \(from ESM\): 🟢/);
    expect(stdout).toMatch(/bundler: 🟢/);
  });

  it('matches the committed API reports (public API changes show up in review)', async () => {
    await run('pnpm', ['run', 'api:check'], { cwd: pkgDir }).catch((err: Error & { stdout?: string }) => {
      throw new Error(
        `the public API changed; run 'pnpm --filter @maintd/core api:update' and commit api/:\n${err.stdout ?? err.message}`,
        {
          cause: err,
        },
      );
    });
  }, 60_000);

  it('passes publint', async () => {
    const { stdout } = await run(bin('publint'), ['run', '--strict'], { cwd: pkgDir });
    expect(stdout).not.toMatch(/error|warning/i);
  });
});
