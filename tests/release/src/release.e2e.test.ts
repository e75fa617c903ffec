import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestRegistry } from './registry.js';

const run = promisify(execFile);
const testsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(testsDir, '../..');
const bin = (name: string): string => join(repoRoot, 'node_modules/.bin', name);

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly files?: readonly string[];
  readonly bin?: Record<string, string>;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

const readManifest = async (dir: string): Promise<Manifest> =>
  JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest;

/** What the release publishes (docs/ARCHITECTURE.md §1), by workspace directory. */
const PUBLISHED = ['packages/core', 'apps/master', 'apps/exporter', 'apps/tui'] as const;
/** The published binaries, by package. */
const BINARIES = { '@maintd/master': 'maintd', '@maintd/exporter': 'maintd-exporter', '@maintd/tui': 'maintd-top' };

/**
 * The release flow of docs/RELEASING.md against a private registry on loopback (verdaccio):
 * changesets version and publish @maintd/core and the three binaries' packages, then
 * - a fresh project installs @maintd/core from that registry only and uses it from ESM, from
 *   TypeScript, and through its exported contract suite;
 * - an empty npm prefix installs the three binaries globally from that registry only; they
 *   print the released version, `maintd` serves in embedded mode and `maintd-top` shows it.
 */
describe('releasing @maintd/core and the binaries to a private registry', () => {
  let scratch: string;
  let registry: string;
  let verdaccio: TestRegistry | undefined;
  let workspace: string;
  const npmrc = (): string => verdaccio!.npmrc();
  const sh = (
    cmd: string,
    args: string[],
    cwd: string,
    env: NodeJS.ProcessEnv = {},
  ): Promise<{ stdout: string; stderr: string }> =>
    run(cmd, args, {
      cwd,
      env: { ...process.env, npm_config_registry: `${registry}/`, CI: 'true', ...env },
      maxBuffer: 16 << 20,
    });

  beforeAll(async () => {
    // Only a finished build can be published: a dist/main.js that tsc wrote but the bundler has
    // not yet replaced (a build in progress) still imports the private packages.
    for (const dir of PUBLISHED.filter((d) => d.startsWith('apps/'))) {
      const bundle = await readFile(join(repoRoot, dir, 'dist/main.js'), 'utf8').catch(() => '');
      if (!/^import .* from "@maintd\/core";$/m.test(bundle) || /from "@maintd\/(?!core")/.test(bundle))
        throw new Error(`${dir} is not built for publishing (dist/main.js is not the bundle): run \`pnpm build\``);
    }
    scratch = await mkdtemp(join(tmpdir(), 'maintd-release-'));
    verdaccio = await TestRegistry.start(scratch);
    registry = verdaccio.url;

    // A workspace shaped like this one, with the repository's changesets config: the published
    // packages as built here (their manifest and what their `files` name), and every private
    // package under packages/ as a bare manifest, so changesets versions the whole fixed group and
    // pnpm can resolve the binaries' `workspace:` devDependencies on them when it publishes.
    workspace = join(scratch, 'workspace');
    const dirs = new Map<string, string>(); // package name → fixture directory
    for (const dir of [...PUBLISHED, ...(await readdir(join(repoRoot, 'packages'))).map((d) => `packages/${d}`)]) {
      const manifest = await readManifest(join(repoRoot, dir));
      if (dirs.has(manifest.name)) continue; // packages/core: listed twice
      await mkdir(join(workspace, dir), { recursive: true });
      // At 0.0.0 with no changelog, whatever the repository has released: the fixture's own
      // releases are its first (0.1.0) and a patch (0.1.1).
      await writeFile(join(workspace, dir, 'package.json'), JSON.stringify({ ...manifest, version: '0.0.0' }, null, 2));
      if (!manifest.private) {
        for (const entry of manifest.files ?? []) {
          if (entry.startsWith('!') || entry === 'CHANGELOG.md' || !existsSync(join(repoRoot, dir, entry))) continue;
          await cp(join(repoRoot, dir, entry), join(workspace, dir, entry), { recursive: true });
        }
      }
      dirs.set(manifest.name, dir);
    }
    // `pnpm install` would link workspace dependencies; the links are all `pnpm publish` reads.
    for (const dir of dirs.values()) {
      const manifest = await readManifest(join(workspace, dir));
      const deps = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies };
      for (const [name, spec] of Object.entries(deps)) {
        if (!spec.startsWith('workspace:')) continue;
        const target = dirs.get(name);
        if (!target) throw new Error(`${manifest.name} depends on ${name}, which the fixture does not hold`);
        await mkdir(dirname(join(workspace, dir, 'node_modules', name)), { recursive: true });
        await symlink(join(workspace, target), join(workspace, dir, 'node_modules', name));
      }
    }
    await mkdir(join(workspace, 'node_modules'), { recursive: true });
    await cp(join(repoRoot, '.changeset/config.json'), join(workspace, '.changeset/config.json'));
    await symlink(join(repoRoot, 'node_modules/@changesets'), join(workspace, 'node_modules/@changesets'));
    await writeFile(join(workspace, 'package.json'), JSON.stringify({ name: 'release-fixture', private: true }));
    await writeFile(join(workspace, 'pnpm-workspace.yaml'), 'packages:\n  - "packages/*"\n  - "apps/*"\n');
    // changesets picks its publish tool by lockfile, as in this repository: pnpm, whose publish
    // turns the binaries' `workspace:*` dependency on @maintd/core into the released version.
    await writeFile(join(workspace, 'pnpm-lock.yaml'), "lockfileVersion: '9.0'\n");
    await writeFile(join(workspace, '.gitignore'), 'node_modules\n');
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
    verdaccio?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** One release: a changeset for @maintd/core (the fixed group carries the rest), version, publish. */
  const release = async (bump: 'minor' | 'patch', summary: string): Promise<string> => {
    await writeFile(
      join(workspace, '.changeset', `${bump}-${Date.now()}.md`),
      `---\n'@maintd/core': ${bump}\n---\n\n${summary}\n`,
    );
    await sh(bin('changeset'), ['version'], workspace);
    const { stdout, stderr } = await sh(bin('changeset'), ['publish'], workspace);
    const { version } = await readManifest(join(workspace, 'packages/core'));
    for (const dir of PUBLISHED) {
      const manifest = await readManifest(join(workspace, dir));
      expect(manifest.version).toBe(version);
      expect(`${stdout}${stderr}`).toContain(`${manifest.name}@${version}`);
    }
    return version;
  };

  it('publishes a version per release of each published package, with the changelog entries', async () => {
    expect(await release('minor', 'First release of the core.')).toBe('0.1.0');
    expect(await release('patch', 'A second, smaller release.')).toBe('0.1.1');
    for (const name of ['@maintd/core', ...Object.keys(BINARIES)]) {
      const meta = (await (await fetch(`${registry}/${name.replace('/', '%2f')}`)).json()) as {
        versions: Record<string, unknown>;
      };
      expect(Object.keys(meta.versions).sort(), name).toEqual(['0.1.0', '0.1.1']);
    }
    // The private workspace packages are versioned with the group but never published.
    for (const name of ['@maintd/scheduler', '@maintd/settings'])
      expect((await fetch(`${registry}/${name.replace('/', '%2f')}`)).status, name).toBe(404);
    const changelog = await readFile(join(workspace, 'packages/core/CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(
      /## 0\.1\.1[\s\S]*A second, smaller release\.[\s\S]*## 0\.1\.0[\s\S]*First release of the core\./,
    );
  }, 180_000);

  it('publishes binaries whose manifests name only published packages, at the released version', async () => {
    for (const [name, command] of Object.entries(BINARIES)) {
      const published = (await (await fetch(`${registry}/${name.replace('/', '%2f')}/0.1.1`)).json()) as Manifest & {
        exports?: unknown;
      };
      expect(Object.keys(published.bin ?? {}), name).toEqual([command]);
      // The private packages are bundled in: they must not be runtime dependencies.
      const deps = published.dependencies ?? {};
      expect(
        Object.keys(deps).filter((d) => d.startsWith('@maintd/')),
        name,
      ).toEqual(['@maintd/core']);
      expect(deps['@maintd/core'], name).toBe('0.1.1');
      // Bin-only: nothing to import but the manifest (publishConfig.exports).
      expect(published.exports, name).toEqual({ './package.json': './package.json' });
    }
  });

  it('installs @maintd/core from the registry alone into a fresh project that uses it from ESM, TypeScript and vitest', async () => {
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
    const served = await readdir(verdaccio!.storage, { recursive: true });
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
    await symlink(join(testsDir, 'node_modules/@types/node'), join(app, 'node_modules/@types/node')).catch(
      () => undefined,
    );
    await symlink(join(testsDir, 'node_modules/vitest'), join(app, 'node_modules/vitest'));
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
    // The suite's own timing is not under test here, and a loaded 2-core runner can take more
    // than vitest's default 5 s over its longest paging test.
    const { stdout } = await sh(
      bin('vitest'),
      ['run', '--root', app, '--reporter=json', '--testTimeout=30000'],
      app,
    ).catch((err: Error & { stdout?: string }) => {
      throw new Error(`contract suite failed:\n${err.stdout?.slice(-4000) ?? err.message}`, { cause: err });
    });
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { numPassedTests: number; numFailedTests: number };
    expect(report.numFailedTests).toBe(0);
    expect(report.numPassedTests).toBeGreaterThanOrEqual(40);
  }, 240_000);

  describe('npm i -g of the three binaries into an empty prefix', () => {
    let prefix: string;
    let master: ChildProcess | undefined;
    const tmuxSocket = `maintd-release-${process.pid}`;
    const tmux = (...args: string[]): string =>
      execFileSync('tmux', ['-L', tmuxSocket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
    /** The installed binaries and node, nothing else: no workspace tool can stand in for them. */
    const path = (): string => `${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`;
    const installed = (command: string, args: string[]): Promise<{ stdout: string; stderr: string }> =>
      run(join(prefix, 'bin', command), args, { cwd: scratch, env: { PATH: path(), HOME: scratch } });

    beforeAll(async () => {
      try {
        execFileSync('tmux', ['-V']);
      } catch {
        throw new Error('tmux is not installed (apt-get install tmux): maintd-top needs a terminal');
      }
      prefix = join(scratch, 'global');
      await mkdir(prefix);
      // A user config naming our registry alone: ~/.npmrc (scoped registries, tokens) stays out.
      await writeFile(join(scratch, 'global.npmrc'), npmrc());
      await sh('npm', ['install', '--global', '--no-audit', '--no-fund', ...Object.keys(BINARIES)], scratch, {
        npm_config_prefix: prefix,
        npm_config_userconfig: join(scratch, 'global.npmrc'),
      }).catch((err: Error & { stderr?: string }) => {
        throw new Error(`npm i -g failed:\n${err.stderr ?? err.message}`, { cause: err });
      });
    }, 180_000);

    afterAll(() => {
      try {
        tmux('kill-server');
      } catch {
        // No server, or already gone.
      }
      master?.kill('SIGKILL');
    });

    it('installs the latest release, with its runtime dependencies from the registry alone', async () => {
      for (const [name, command] of Object.entries(BINARIES)) {
        const manifest = await readManifest(join(prefix, 'lib/node_modules', name));
        expect(manifest.version, name).toBe('0.1.1');
        expect(existsSync(join(prefix, 'bin', command)), command).toBe(true);
      }
      // Every runtime dependency came through our registry (it stores what it proxied).
      const served = await readdir(verdaccio!.storage, { recursive: true });
      // Not Ink: the dashboard's bundle holds it (docs/ARCHITECTURE.md §4).
      for (const dep of ['hono', '@hono/zod-openapi', 'pino', 'prom-client', 'react', 'openapi-fetch'])
        expect(served).toContain(dep);
    });

    it.each(Object.values(BINARIES))('%s --version prints the released version', async (command) => {
      const { stdout } = await installed(command, ['--version']).catch((err: Error & { stderr?: string }) => {
        throw new Error(`${command} --version failed:\n${err.stderr ?? err.message}`, { cause: err });
      });
      expect(stdout.trim()).toMatch(/(^|\s)0\.1\.1$/);
    });

    it('runs maintd in embedded mode and shows its Overview in maintd-top', async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      let stderr = '';
      // No ETCD_ENDPOINTS: the embedded in-memory store.
      master = spawn(
        join(prefix, 'bin', 'maintd'),
        ['--master-host=127.0.0.1', `--master-port=${port}`, '--log-level=warn'],
        {
          cwd: scratch,
          env: { PATH: path(), HOME: scratch },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      master.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
      const deadline = performance.now() + 20_000;
      for (;;) {
        const ready = await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready) break;
        if (master.exitCode !== null || performance.now() > deadline)
          throw new Error(`the installed maintd did not become ready:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }

      // maintd-top has no one-shot mode yet: a real terminal (tmux) shows its first screen.
      const env = [`PATH=${path()}`, `HOME=${scratch}`, 'TERM=xterm-256color', 'LANG=C.UTF-8'];
      const command = ['env', '-i', ...env, 'maintd-top', '--url', url, '--readonly']
        .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
        .join(' ');
      tmux('-u', 'new-session', '-d', '-s', 'top', '-x', '160', '-y', '40', command);
      let screen = '';
      const until = performance.now() + 20_000;
      while (performance.now() < until) {
        screen = tmux('capture-pane', '-p', '-t', 'top');
        if (screen.includes('● live') && screen.includes('Recent outcomes')) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(screen).toContain(`maintd-top  ${url}`);
      expect(screen).toContain('● live');
      expect(screen).toMatch(/1 Overview/);
      expect(screen).toMatch(/Queue\s+queued\s+running/);
      expect(screen).toContain('Recent outcomes');
      tmux('send-keys', '-t', 'top', 'q');
    }, 60_000);
  });
});
