import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './testing/etcd-server.js';

const run = promisify(execFile);
const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(pkgDir, '../..');
const bin = (name: string): string => join(repoRoot, 'node_modules/.bin', name);

/**
 * The release flow of docs/RELEASING.md against a private registry on loopback (verdaccio):
 * changesets version and publish @maintd/core, then a fresh project installs it from that
 * registry only and uses it from ESM, from TypeScript, and through its exported contract suite.
 */
describe('releasing @maintd/core to a private registry', () => {
  let scratch: string;
  let registry: string;
  let token: string;
  let verdaccio: ChildProcess | undefined;
  let workspace: string;
  const npmrc = (): string => `registry=${registry}/\n//${new URL(registry).host}/:_authToken=${token}\n`;
  const sh = (cmd: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> =>
    run(cmd, args, {
      cwd,
      env: { ...process.env, npm_config_registry: `${registry}/`, CI: 'true' },
      maxBuffer: 16 << 20,
    });

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'maintd-release-'));
    const port = await freePort();
    registry = `http://127.0.0.1:${port}`;
    const upstream = process.env.npm_config_registry ?? 'https://registry.npmjs.org/';
    await writeFile(
      join(scratch, 'verdaccio.yaml'),
      [
        `storage: ${join(scratch, 'storage')}`,
        'auth:',
        `  htpasswd: { file: ${join(scratch, 'htpasswd')}, max_users: 10 }`,
        'uplinks:',
        `  upstream: { url: ${upstream}, timeout: 60s }`,
        'packages:',
        "  '@maintd/*': { access: $all, publish: $authenticated }",
        "  '**': { access: $all, publish: $authenticated, proxy: upstream }",
        `listen: 127.0.0.1:${port}`,
        'log: { type: stdout, format: json, level: error }',
      ].join('\n'),
    );
    verdaccio = spawn(bin('verdaccio'), ['--config', join(scratch, 'verdaccio.yaml')], { stdio: 'ignore' });
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${registry}/-/ping`)).ok) break;
      } catch {
        if (i > 300) throw new Error('verdaccio did not start');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const user = await fetch(`${registry}/-/user/org.couchdb.user:release-bot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release-bot', password: 'release-bot-password' }),
    });
    token = ((await user.json()) as { token: string }).token;

    // A workspace holding @maintd/core as built here, with the repository's changesets config.
    workspace = join(scratch, 'workspace');
    await mkdir(join(workspace, 'packages/core'), { recursive: true });
    await mkdir(join(workspace, 'node_modules'), { recursive: true });
    for (const f of ['package.json', 'README.md', 'dist'])
      await cp(join(pkgDir, f), join(workspace, 'packages/core', f), { recursive: true });
    await cp(join(repoRoot, '.changeset/config.json'), join(workspace, '.changeset/config.json'), { recursive: true });
    await symlink(join(repoRoot, 'node_modules/@changesets'), join(workspace, 'node_modules/@changesets'));
    await writeFile(join(workspace, 'package.json'), JSON.stringify({ name: 'release-fixture', private: true }));
    await writeFile(join(workspace, 'pnpm-workspace.yaml'), 'packages:\n  - "packages/*"\n');
    await writeFile(join(workspace, '.npmrc'), npmrc());
    await sh('git', ['init', '-q', '-b', 'main'], workspace);
    await sh('git', ['-c', 'user.email=ci@example.invalid', '-c', 'user.name=ci', 'add', '-A'], workspace);
    await sh(
      'git',
      ['-c', 'user.email=ci@example.invalid', '-c', 'user.name=ci', 'commit', '-qm', 'fixture'],
      workspace,
    );
  }, 120_000);

  afterAll(async () => {
    verdaccio?.kill('SIGKILL');
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const release = async (bump: 'minor' | 'patch', summary: string): Promise<string> => {
    await writeFile(
      join(workspace, '.changeset', `${bump}-${Date.now()}.md`),
      `---\n'@maintd/core': ${bump}\n---\n\n${summary}\n`,
    );
    await sh(bin('changeset'), ['version'], workspace);
    const { stdout, stderr } = await sh(bin('changeset'), ['publish'], workspace);
    const manifest = JSON.parse(await readFile(join(workspace, 'packages/core/package.json'), 'utf8')) as {
      version: string;
    };
    expect(`${stdout}${stderr}`).toContain(`@maintd/core@${manifest.version}`);
    return manifest.version;
  };

  it('publishes a version per release, with the changelog entries', async () => {
    expect(await release('minor', 'First release of the core.')).toBe('0.1.0');
    expect(await release('patch', 'A second, smaller release.')).toBe('0.1.1');
    const meta = (await (await fetch(`${registry}/@maintd%2fcore`)).json()) as { versions: Record<string, unknown> };
    expect(Object.keys(meta.versions).sort()).toEqual(['0.1.0', '0.1.1']);
    const changelog = await readFile(join(workspace, 'packages/core/CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(
      /## 0\.1\.1[\s\S]*A second, smaller release\.[\s\S]*## 0\.1\.0[\s\S]*First release of the core\./,
    );
  }, 120_000);

  it('installs from the registry alone into a fresh project that uses it from ESM, TypeScript and vitest', async () => {
    const app = join(scratch, 'consumer');
    await mkdir(app, { recursive: true });
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await writeFile(join(app, '.npmrc'), npmrc());
    await sh('npm', ['install', '--no-audit', '--no-fund', '@maintd/core@0.1.1'], app);
    // The only registry npm knows is ours: every dependency went through it (it proxies the public
    // ones and stores what it served).
    const lock = JSON.parse(await readFile(join(app, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const installed = Object.keys(lock.packages).filter((k) => k.startsWith('node_modules/'));
    expect(installed.length).toBeGreaterThan(5);
    const served = await readdir(join(scratch, 'storage'), { recursive: true });
    for (const dep of ['zod', 'etcd3', 'cockatiel', 'uuid', 'pure-rand']) expect(served).toContain(dep);

    await writeFile(
      join(app, 'smoke.mjs'),
      "import { TaskStore, MemoryKv, FakeClock } from '@maintd/core';\n" +
        'const clock = new FakeClock();\n' +
        "const s = await TaskStore.open({ kv: new MemoryKv({ clock }), clock, masterId: 'm' });\n" +
        "console.log((await s.enqueue('compact', 'store-1')).task.state);\nawait s.close();\nprocess.exit(0);\n",
    );
    expect((await sh('node', ['smoke.mjs'], app)).stdout.trim()).toBe('queued');

    // The consumer's own toolchain: TypeScript with both resolutions, vitest for the suites.
    // @types/node may already have come in with a dependency; otherwise lend ours.
    await mkdir(join(app, 'node_modules/@types'), { recursive: true });
    await symlink(join(pkgDir, 'node_modules/@types/node'), join(app, 'node_modules/@types/node')).catch(
      () => undefined,
    );
    await symlink(join(pkgDir, 'node_modules/vitest'), join(app, 'node_modules/vitest'));
    await writeFile(
      join(app, 'consumer.mts'),
      "import { type TaskRecord, type Kv, MemoryKv, TaskStore } from '@maintd/core';\n" +
        "import { taskStoreContract, FakeClock } from '@maintd/core/testing';\n" +
        'const kv: Kv = new MemoryKv({ clock: new FakeClock() });\n' +
        'export const used: [Kv, typeof TaskStore.open, typeof taskStoreContract, TaskRecord | undefined] = [kv, TaskStore.open, taskStoreContract, undefined];\n',
    );
    for (const [module, resolution] of [
      ['node16', 'node16'],
      ['esnext', 'bundler'],
    ]) {
      await writeFile(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'ES2022',
            module,
            moduleResolution: resolution,
            types: ['node'],
          },
          include: ['consumer.mts'],
        }),
      );
      await sh(bin('tsc'), ['-p', 'tsconfig.json'], app).catch((err: Error & { stdout?: string }) => {
        throw new Error(`tsc (${resolution}) failed:\n${err.stdout ?? err.message}`, { cause: err });
      });
    }

    await writeFile(
      join(app, 'contract.test.mjs'),
      "import { kvContract, memoryHarness, taskStoreContract } from '@maintd/core/testing';\n" +
        "kvContract('MemoryKv (installed)', memoryHarness);\ntaskStoreContract('MemoryKv (installed)', memoryHarness);\n",
    );
    const { stdout } = await sh(bin('vitest'), ['run', '--root', app, '--reporter=json'], app).catch(
      (err: Error & { stdout?: string }) => {
        throw new Error(`contract suite failed:\n${err.stdout?.slice(-4000) ?? err.message}`, { cause: err });
      },
    );
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { numPassedTests: number; numFailedTests: number };
    expect(report.numFailedTests).toBe(0);
    expect(report.numPassedTests).toBeGreaterThanOrEqual(40);
  }, 240_000);
});
