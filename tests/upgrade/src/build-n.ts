/**
 * Release N: this workspace's master and simulator, plus one task kind that N-1 does not know,
 * added the way docs/ARCHITECTURE.md §2.1 says a kind is added — one file in
 * `packages/scheduler/src/kinds/` and its registry entry — to a copy of the scheduler's sources,
 * which the master's and the simulator's sources are then bundled against.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isBuiltin } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const run = promisify(execFile);

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** The kind N adds: a name N-1's registry does not hold. */
export const EXTRA_KIND = 'verify';
/** Its sweep's settings (declared by its spec, as every kind's are). */
export const EXTRA_KIND_ENV = {
  interval: 'VERIFY_INTERVAL_SECS',
  threshold: 'VERIFY_MIN_OWNERS',
  pool: 'VERIFY_CONCURRENCY',
} as const;
/** The metric the kind declares: its runs on a master, by outcome. */
export const EXTRA_KIND_METRIC = 'master_verify_runs_total';

/**
 * The kind file, modelled on `kinds/merge-wal.ts` and `kinds/compact.ts`: a pool and a metric of
 * its own, a sweep over every store a worker reports (its backlog is the store's owner count),
 * and one call of its worker route on the first worker, whose answer is the outcome. One call per
 * run is what lets the test count the kind's runs at the workers exactly.
 */
const KIND_FILE = `import { setting, timerSecs, wholeNumber } from '@maintd/settings';
import { Counter } from 'prom-client';
import { z } from 'zod';
import { NO_ENDPOINTS_ERROR, bound, callStoreRoute, checkTarget } from '../executor.js';
import { isStoreError } from '../workers/client.js';
import type { KindSpec } from './spec.js';

const ROUTE = '${EXTRA_KIND}';

/** \`${EXTRA_KIND}\`: ask the first worker to check a store; one call per run. */
export const ${EXTRA_KIND} = {
  pool: { name: '${EXTRA_KIND}', sizeSetting: '${EXTRA_KIND_ENV.pool}' },
  route: ROUTE,
  sweep: {
    job: '${EXTRA_KIND}-sweep',
    intervalSetting: '${EXTRA_KIND_ENV.interval}',
    thresholdSetting: '${EXTRA_KIND_ENV.threshold}',
    backlog: (row) => row.owners.length,
  },
  settings: {
    ${EXTRA_KIND_ENV.interval}: setting(timerSecs(0), '0', { description: 'How often the ${EXTRA_KIND} sweep runs; 0 disables it.' }),
    ${EXTRA_KIND_ENV.threshold}: setting(wholeNumber(1), '1', { description: 'Owners at which the sweep enqueues a ${EXTRA_KIND}.' }),
    ${EXTRA_KIND_ENV.pool}: setting(wholeNumber(0), '2', { description: 'Slots of the ${EXTRA_KIND} pool; 0 = the general pool runs it.' }),
  },
  metrics: (registry) => {
    const runs = new Counter({
      name: '${EXTRA_KIND_METRIC}',
      help: '${EXTRA_KIND} runs on this master, by outcome.',
      labelNames: ['outcome'],
      registers: [registry],
    });
    return (run) => runs.inc({ outcome: run.outcome.ok ? 'done' : 'failed' });
  },
  run: async (target, ctx) => {
    const invalid = checkTarget(target);
    if (invalid) return { outcome: invalid, attempts: [] };
    const endpoint = ctx.endpoints[0];
    if (endpoint === undefined) return { outcome: { ok: false, error: NO_ENDPOINTS_ERROR, errorClass: 'infrastructure' }, attempts: [] };
    const { result, attempt } = await callStoreRoute(endpoint, ROUTE, target, z.looseObject({}), ctx);
    if (result.kind === 'ok') return { outcome: { ok: true, detail: 'verified' }, attempts: [attempt] };
    const errorClass = result.kind !== 'not_found' && isStoreError(result) ? 'target' : 'infrastructure';
    const error = result.kind === 'not_found' ? \`no worker owns store '\${target}'\` : result.message;
    return { outcome: { ok: false, error: bound(error), errorClass }, attempts: [attempt] };
  },
} satisfies KindSpec;
`;

/**
 * The cluster feature N adds (docs/ARCHITECTURE.md §2.8): one line in the feature registry. It
 * gates nothing of its own; it is what makes the gate's mechanics part of the roll — waiting while
 * an N-1 master lives, held by `preserve_downgrade`, switched on once released, and then an N-1
 * master refusing to start.
 */
export const EXTRA_FEATURE = 'verify_checks';
const FEATURE_LINE = `  ${EXTRA_FEATURE}: { description: 'stores are verified by the ${EXTRA_KIND} kind' },`;

/** The registry's import and entry lines for the kind (after the shipped ones). */
const IMPORT_LINE = `import { ${EXTRA_KIND} } from './${EXTRA_KIND}.js';`;
const ENTRY_LINE = `  ${EXTRA_KIND},`;

/** N's binaries, ready to spawn with `node`. */
export interface ReleaseN {
  readonly maintd: string;
  readonly sim: string;
  /** How the copied scheduler differs from the workspace's, as `+`/`-` lines per file (for the report). */
  readonly diff: Readonly<Record<string, readonly string[]>>;
  readonly version: string;
  /** Type-checks the copied scheduler (the kind file included) as its package does; tsc's output, empty when clean. */
  typecheck(): Promise<string>;
}

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)));
  }
  return out.sort();
}

/**
 * Line differences between two versions of a text file, as `+line`/`-line`: a multiset
 * difference, which is all the check needs (lines added or removed, not where).
 */
function lineDiff(before: string, after: string): string[] {
  const count = new Map<string, number>();
  for (const l of before.split('\n')) count.set(l, (count.get(l) ?? 0) + 1);
  const added: string[] = [];
  for (const l of after.split('\n')) {
    const n = count.get(l) ?? 0;
    if (n > 0) count.set(l, n - 1);
    else added.push(`+${l}`);
  }
  const removed = [...count].flatMap(([l, n]) => Array.from({ length: n }, () => `-${l}`));
  return [...added, ...removed];
}

/** Every file of `a` and `b` (relative paths) that differs, with its line differences. */
export async function treeDiff(a: string, b: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  const names = new Set([...(await files(a)), ...(await files(b))]);
  for (const name of names) {
    const x = existsSync(join(a, name)) ? await readFile(join(a, name), 'utf8') : undefined;
    const y = existsSync(join(b, name)) ? await readFile(join(b, name), 'utf8') : undefined;
    if (x === y) continue;
    out[name] = x === undefined ? ['(new file)'] : y === undefined ? ['(deleted)'] : lineDiff(x, y);
  }
  return out;
}

/**
 * `node_modules` for a bundle outside the workspace: the union of the given packages'
 * `node_modules` (first wins), as symlinks, so the bundle's external imports resolve to what the
 * workspace installed.
 */
async function linkModules(into: string, from: readonly string[]): Promise<void> {
  await mkdir(into, { recursive: true });
  const seen = new Set<string>();
  for (const dir of from) {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      if (e.name.startsWith('@')) {
        await mkdir(join(into, e.name), { recursive: true });
        for (const sub of await readdir(join(dir, e.name))) {
          const name = `${e.name}/${sub}`;
          if (seen.has(name)) continue;
          seen.add(name);
          await symlink(join(dir, name), join(into, name));
        }
      } else if (!seen.has(e.name)) {
        seen.add(e.name);
        await symlink(join(dir, e.name), join(into, e.name));
      }
    }
  }
}

/**
 * The other workspace packages N's binaries bundle, from their sources: N is the working tree as
 * it stood when the test started, whatever rebuilds `dist/` meanwhile.
 */
const SOURCES: Readonly<Record<string, string>> = {
  core: 'packages/core/src',
  api: 'packages/api/src',
  settings: 'packages/settings/src',
};

/**
 * The source file (under `src`, without `.ts`) of a package's subpath, by its `exports` map: a
 * subpath need not be named as its file (`@maintd/settings/daemon` is `src/run-daemon.ts`).
 */
function sourceOfSubpath(src: string, subpath: string | undefined): string {
  const pkg = JSON.parse(readFileSync(join(REPO, src, '../package.json'), 'utf8')) as {
    exports?: Record<string, { import?: string } | string>;
  };
  const entry = pkg.exports?.[subpath ? `./${subpath}` : '.'];
  const target = typeof entry === 'string' ? entry : entry?.import;
  const m = target ? /^\.\/dist\/(.+)\.js$/.exec(target) : null;
  return m?.[1] ?? subpath ?? 'index';
}

/**
 * Bundles one app's `src/main.ts` with `@maintd/scheduler` (any subpath) taken from `scheduler`
 * (the copy's `src`), `@maintd/core`, `@maintd/api` and `@maintd/settings` from their sources, and every other
 * package left an import.
 */
async function bundle(app: string, scheduler: string, outDir: string): Promise<string> {
  const redirect: Plugin = {
    name: 'scheduler-copy',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isBuiltin(args.path)) return { external: true };
        const m = /^@maintd\/([^/]+)(?:\/(.+))?$/.exec(args.path);
        if (m?.[1] === 'scheduler') return { path: join(scheduler, m[2] ?? '', 'index.ts') };
        const src = m?.[1] && SOURCES[m[1]];
        if (src) {
          const file = join(REPO, src, sourceOfSubpath(src, m[2]));
          return { path: existsSync(`${file}.ts`) ? `${file}.ts` : join(file, 'index.ts') };
        }
        return { external: true };
      });
    },
  };
  const outfile = join(outDir, 'dist/main.js');
  await build({
    entryPoints: [join(REPO, app, 'src/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    keepNames: true,
    logLevel: 'error',
    plugins: [redirect],
  });
  // `version.ts` reads `../package.json` beside the bundle; `bin/` runs `main(argv)`.
  await cp(join(REPO, app, 'package.json'), join(outDir, 'package.json'));
  const bin = join(outDir, 'bin/main.js');
  await mkdir(dirname(bin), { recursive: true });
  await writeFile(
    bin,
    "import process from 'node:process';\nimport { main } from '../dist/main.js';\n\nawait main(process.argv.slice(2));\n",
  );
  await linkModules(join(outDir, 'node_modules'), [
    join(REPO, app, 'node_modules'),
    join(REPO, 'packages/scheduler/node_modules'),
    join(REPO, 'packages/api/node_modules'),
    join(REPO, 'packages/settings/node_modules'),
    join(REPO, 'packages/core/node_modules'),
  ]);
  return bin;
}

/**
 * Copies the scheduler's sources into `dir`, adds {@link EXTRA_KIND} there (its kind file and its
 * registry entry), and bundles the master and the simulator against the copy.
 */
export async function buildReleaseN(dir: string): Promise<ReleaseN> {
  const original = join(REPO, 'packages/scheduler/src');
  const copy = join(dir, 'scheduler/src');
  await cp(original, copy, { recursive: true });
  // The copy's own imports (zod, @maintd/settings, …) resolve as the package's do.
  await symlink(join(REPO, 'packages/scheduler/node_modules'), join(dir, 'scheduler/node_modules'));

  await writeFile(join(copy, `kinds/${EXTRA_KIND}.ts`), KIND_FILE);
  const registry = join(copy, 'kinds/index.ts');
  const text = await readFile(registry, 'utf8');
  const imports = text.match(/^import .*;$/gm) ?? [];
  const lastImport = imports.at(-1);
  const entries = /export const KINDS = \{\n([\s\S]*?)\n\} as const/.exec(text);
  if (!lastImport || !entries) throw new Error('kinds/index.ts no longer has the shape this test edits');
  await writeFile(
    registry,
    text
      .replace(lastImport, `${lastImport}\n${IMPORT_LINE}`)
      .replace(entries[0], entries[0].replace(`${entries[1]}\n}`, `${entries[1]}\n${ENTRY_LINE}\n}`)),
  );
  const features = join(copy, 'features/index.ts');
  const featureText = await readFile(features, 'utf8');
  const open = 'export const FEATURES: FeatureRegistry = {\n';
  if (!featureText.includes(open)) throw new Error('features/index.ts no longer has the shape this test edits');
  await writeFile(features, featureText.replace(open, `${open}${FEATURE_LINE}\n`));

  const diff = await treeDiff(original, copy);
  // The copy as a package of its own, for tsc: an ES module package, the scheduler's build settings.
  await writeFile(join(dir, 'scheduler/package.json'), JSON.stringify({ name: '@maintd/scheduler', type: 'module' }));
  await writeFile(
    join(dir, 'scheduler/tsconfig.json'),
    JSON.stringify({
      extends: join(REPO, 'tsconfig.base.json'),
      compilerOptions: { rootDir: 'src', noEmit: true },
      include: ['src'],
      exclude: ['src/**/*.test.ts'],
    }),
  );
  const typecheck = async (): Promise<string> => {
    try {
      await run(join(REPO, 'node_modules/.bin/tsc'), ['-p', join(dir, 'scheduler/tsconfig.json')], {
        maxBuffer: 16 << 20,
      });
      return '';
    } catch (err) {
      const e = err as Error & { stdout?: string };
      return e.stdout || e.message;
    }
  };
  const [maintd, sim] = await Promise.all([
    bundle('apps/master', copy, join(dir, 'master')),
    bundle('apps/sim', copy, join(dir, 'sim')),
  ]);
  const { version } = JSON.parse(await readFile(join(REPO, 'apps/master/package.json'), 'utf8')) as {
    version: string;
  };
  return { maintd, sim, diff, version, typecheck };
}

/** What the copy must differ in: the kind file, the registry's import and entry, and the feature's line. */
export const EXPECTED_DIFF: Readonly<Record<string, readonly string[]>> = {
  [`kinds/${EXTRA_KIND}.ts`]: ['(new file)'],
  'kinds/index.ts': [`+${IMPORT_LINE}`, `+${ENTRY_LINE}`],
  'features/index.ts': [`+${FEATURE_LINE}`],
};
