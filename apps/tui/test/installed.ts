import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const TUI_DIR = fileURLToPath(new URL('..', import.meta.url));
const CORE_DIR = fileURLToPath(new URL('../../../packages/core', import.meta.url));

/** `@maintd/tui` as `npm i @maintd/tui` installs it, in a scratch directory. */
export interface InstalledTui {
  /** The scratch directory: its `node_modules` holds the dashboard and what npm put beside it. */
  readonly dir: string;
  readonly name: string;
  readonly version: string;
  /** The `maintd-top` script of the installed package. */
  readonly bin: string;
  /** The installed bundle, `dist/main.js`: `main` and the building blocks `src/index.ts` names. */
  readonly main: string;
  /** Deletes the scratch directory. */
  readonly remove: () => Promise<void>;
}

/** `pnpm pack` in a package's directory: the tarball's path (the last line it prints). */
async function pack(dir: string, destination: string): Promise<string> {
  const { stdout } = await run('pnpm', ['pack', '--pack-destination', destination], { cwd: dir });
  const tarball = stdout.trim().split('\n').at(-1);
  if (!tarball?.endsWith('.tgz')) throw new Error(`pnpm pack in ${dir} printed no tarball:\n${stdout}`);
  return tarball;
}

/**
 * Packs the built dashboard as it would be published (`pnpm pack` rewrites its `workspace:`
 * ranges to versions) and installs the tarball with npm, which resolves its runtime dependencies
 * from the registry as a user's install would: none of the workspace's node_modules or patches.
 * `@maintd/core` is not on that registry, so its tarball, packed the same way, is installed
 * beside it. Needs `pnpm build` (of this package and core) first.
 */
export async function installPackedTui(): Promise<InstalledTui> {
  for (const [dir, what] of [
    [TUI_DIR, 'apps/tui'],
    [CORE_DIR, 'packages/core'],
  ] as const) {
    if (!existsSync(join(dir, 'dist'))) throw new Error(`${what} is not built: run \`pnpm build\` first`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'maintd-tui-installed-'));
  try {
    const tarballs = [await pack(CORE_DIR, dir), await pack(TUI_DIR, dir)];
    // Its own manifest, so npm does not look for one in a parent directory.
    await writeFile(join(dir, 'package.json'), '{ "private": true }\n');
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], {
      cwd: dir,
    });
    const packageDir = join(dir, 'node_modules/@maintd/tui');
    const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      bin: Record<string, string>;
    };
    const bin = manifest.bin['maintd-top'];
    if (bin === undefined) throw new Error(`${manifest.name} names no maintd-top bin`);
    return {
      dir,
      name: manifest.name,
      version: manifest.version,
      bin: join(packageDir, bin),
      main: join(packageDir, 'dist/main.js'),
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
