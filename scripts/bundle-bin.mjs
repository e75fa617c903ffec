// @ts-check
/**
 * Bundles a binary's package for publishing: run from the app's directory after `tsc`, it
 * replaces `dist/main.js` (the module `bin/*.js` imports) with one ES module that holds the
 * app's own code and the private workspace packages it uses (`@maintd/scheduler`, `@maintd/api`,
 * `@maintd/settings`), and keeps every other import as an import: Node built-ins and the app's
 * runtime `dependencies`, which npm installs next to it.
 *
 * Why: the binaries are published (docs/ARCHITECTURE.md §1) but those workspace packages are not, so the
 * tarball must carry their code; bundling it in is what lets `npm i -g @maintd/master` work
 * without publishing internals. It runs on every build, not only at pack time, so the workspace
 * (`node apps/master/bin/maintd.js`, every test that spawns a binary) runs the same file that
 * ships. The other files tsc wrote stay for the workspace's own importers (tests, bench, the
 * exporter's and the dashboard's library entries); the tarball's `files` take only main.js (and,
 * with `--bundle`, dist/chunks/ and the licence texts).
 *
 * `--bundle <package>` (repeatable) bundles a third-party package in too, as the workspace
 * installs it (with its `pnpm patch`, patches/), with the dependencies it does not share with the
 * app; the ones it shares (React, for Ink) stay imports, one copy for the app and the package. It
 * must be a devDependency, so npm never installs the registry's copy beside the binary. Their
 * licence texts go to `dist/THIRD-PARTY-LICENSES.txt`, which the tarball ships. The dashboard
 * bundles Ink this way (docs/ARCHITECTURE.md §4). `--library`: the bundle also exports what the
 * app's `dist/index.js` does, so that a benchmark can drive the very file that ships.
 *
 * The build fails when bundled code imports a package that is not one of the app's runtime
 * dependencies, or one that the app and a bundled workspace package declare with different
 * ranges, or that a bundled third-party package resolves to another copy than the app's: a
 * published binary would otherwise fail at startup on another machine, or run with a version its
 * bundled code was never tested with. It fails too when a runtime dependency depends on a bundled
 * package (npm would install that dependency a copy of its own) and when a bundled package ships
 * no licence file.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** @typedef {{ name: string, version?: string, license?: string, private?: boolean, dependencies?: Record<string, string>, devDependencies?: Record<string, string>, peerDependencies?: Record<string, string>, optionalDependencies?: Record<string, string>, peerDependenciesMeta?: Record<string, { optional?: boolean }> }} Manifest */

const { values: flags } = parseArgs({
  options: {
    // The bundle also exports what the app's dist/index.js does (the building blocks its
    // benchmark drives), so that a benchmark can time the very file that ships.
    library: { type: 'boolean', default: false },
    bundle: { type: 'string', multiple: true, default: [] },
  },
});
const appDir = process.cwd();
/** @type {(path: string) => Manifest} */
const readManifest = (path) => JSON.parse(readFileSync(path, 'utf8'));
const app = readManifest(join(appDir, 'package.json'));
// esbuild is each app's devDependency: resolve it from the app, as its build script would.
/** @type {typeof import('esbuild')} */
const esbuild = createRequire(join(appDir, 'package.json'))('esbuild');

/** What npm installs beside the binary: the only packages bundled code may import. */
const runtime = { ...app.optionalDependencies, ...app.peerDependencies, ...app.dependencies };

/**
 * Private workspace packages are bundled in. They are devDependencies (`workspace:`): needed to
 * build the binary, never installed with it.
 */
const bundled = new Set(
  Object.entries(app.devDependencies ?? {})
    .filter(([, spec]) => spec.startsWith('workspace:'))
    .map(([name]) => name)
    .filter((name) => readManifest(join(appDir, 'node_modules', name, 'package.json')).private === true),
);

/** Third-party packages bundled in (`--bundle`), with their own dependencies. */
const vendored = new Set(flags.bundle);

/** Where `name` is installed for code in `dir` (Node's lookup of node_modules), or undefined. */
const installedDir = (/** @type {string} */ dir, /** @type {string} */ name) => {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (d === dirname(d)) return undefined;
  }
};

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
const packageName = (/** @type {string} */ specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** The manifest of the package a file belongs to (the nearest package.json above it). */
const owner = (/** @type {string} */ file) => {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const path = join(dir, 'package.json');
    if (existsSync(path)) return readManifest(path);
  }
  throw new Error(`no package.json above ${file}`);
};

/** @type {Set<string>} */
const problems = new Set();
for (const name of vendored) {
  if (runtime[name] !== undefined)
    problems.add(`${name} is bundled (--bundle), so it must not be one of ${app.name}'s dependencies`);
  else if (app.devDependencies?.[name] === undefined)
    problems.add(`${name} is bundled (--bundle) but is not one of ${app.name}'s devDependencies`);
}
for (const dep of Object.keys(runtime)) {
  const dir = installedDir(appDir, dep);
  if (dir === undefined) continue;
  const theirs = readManifest(join(dir, 'package.json'));
  for (const name of vendored) {
    if (theirs.dependencies?.[name] !== undefined || theirs.peerDependencies?.[name] !== undefined)
      problems.add(
        `${app.name} depends on ${dep}, which needs ${name}: npm would install it a copy of ${name} of its own`,
      );
  }
}
/** @type {import('esbuild').Plugin} */
const onlyRuntimeDependencies = {
  name: 'only-runtime-dependencies',
  setup(build) {
    // Bare specifiers only: relative imports are the app's or a bundled package's own files.
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (isBuiltin(args.path)) return { external: true };
      const name = packageName(args.path);
      if (bundled.has(name) || vendored.has(name)) return undefined;
      const from = owner(args.importer);
      const where = `${relative(appDir, args.importer)} (${from.name})`;
      const range = runtime[name];
      // Only a bundled third-party package's code lives in a node_modules directory (workspace
      // packages resolve to their own directories).
      if (args.importer.includes(`${sep}node_modules${sep}`)) {
        if (range === undefined) {
          // An optional peer that nothing installs (Ink's react-devtools-core, imported only
          // when DEV=true): left as the import the package already guards.
          if (from.peerDependenciesMeta?.[name]?.optional && installedDir(args.resolveDir, name) === undefined)
            return { external: true };
          return undefined; // its own dependency: bundled with it
        }
        const theirs = installedDir(args.resolveDir, name);
        const ours = installedDir(appDir, name);
        if (theirs !== ours)
          problems.add(
            `${where} imports '${name}' from ${theirs ?? 'nowhere'}, but ${app.name}'s is ${ours}: both must use the one copy npm installs`,
          );
        return { external: true };
      }
      if (range === undefined) {
        problems.add(`${where} imports '${args.path}', which is not in ${app.name}'s dependencies`);
      } else if (from.name !== app.name) {
        const theirs = from.dependencies?.[name] ?? from.peerDependencies?.[name];
        if (theirs !== range)
          problems.add(
            `${where} imports '${name}' ${theirs ?? '(undeclared)'}, but ${app.name} depends on ${name} ${range}`,
          );
      }
      return { external: true };
    });
  },
};

const outdir = join(appDir, 'dist');
const outfile = join(outdir, 'main.js');
// With --library, the bundle's entry re-exports main.js and index.js (written for the build and
// deleted after it).
const entry = flags.library ? join(outdir, 'bundle-entry.js') : outfile;
if (flags.library) writeFileSync(entry, 'export * from "./main.js";\nexport * from "./index.js";\n');
const result = await esbuild
  .build({
    entryPoints: [{ in: entry, out: 'main' }],
    outdir,
    // A bundled package's dynamic import stays one (Ink's devtools, which imports an optional peer
    // nothing installs, only when DEV=true): its code goes to a chunk of its own, loaded then.
    splitting: vendored.size > 0,
    chunkNames: 'chunks/[name]-[hash]',
    // The input is tsc's output: bundling it in place keeps the path bin/*.js imports.
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Error names and class names show up in logs and in /api error bodies.
    keepNames: true,
    // Composed with tsc's maps: stack traces (node --enable-source-maps) point at the .ts sources.
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [onlyRuntimeDependencies],
    // Bundled CommonJS code (React's reconciler, for Ink) requires packages kept as imports (react):
    // an ES module has no `require` of its own.
    ...(vendored.size > 0
      ? {
          banner: {
            js: `import { createRequire as createRequireOfBundle } from 'node:module';\nconst require = createRequireOfBundle(import.meta.url);`,
          },
        }
      : {}),
    // Written below, and only if the checks pass: a failed build leaves tsc's output, which still
    // runs in the workspace.
    write: false,
  })
  .finally(() => {
    if (flags.library) rmSync(entry);
  });

/** The directories of the third-party packages bundled in, from the files the bundle holds. */
const thirdParty = new Set(
  Object.keys(result.metafile.inputs).flatMap((file) => {
    const path = join(appDir, file);
    const at = path.lastIndexOf(`${sep}node_modules${sep}`);
    if (at === -1) return [];
    const [scope = '', name = ''] = path.slice(at + `${sep}node_modules${sep}`.length).split(sep);
    return [join(path.slice(0, at), 'node_modules', scope, scope.startsWith('@') ? name : '')];
  }),
);
/**
 * Licence texts, from the upstream repository, of bundled packages whose npm tarball ships none
 * (yoga-layout's: its sources say "MIT license found in the LICENSE file" of the repository).
 */
const upstreamLicences = fileURLToPath(new URL('licences', import.meta.url));
/** The licence text of each, as its package ships it (MIT and the like require it beside the code). */
const licences = [...thirdParty]
  .map((dir) => {
    const manifest = readManifest(join(dir, 'package.json'));
    const upstream = join(upstreamLicences, `${manifest.name.replace('/', '__')}.txt`);
    const files = [
      ...readdirSync(dir)
        .filter((f) => /^(licen[cs]e|copying|notice)([.-]|$)/i.test(f))
        .map((f) => join(dir, f)),
      ...(existsSync(upstream) ? [upstream] : []),
    ];
    if (files.length === 0)
      problems.add(
        `${manifest.name} is bundled but ships no licence file: put its repository's in ${relative(appDir, upstreamLicences)}/`,
      );
    const texts = files.map((f) => readFileSync(f, 'utf8').trim());
    return `${manifest.name}@${manifest.version} (${manifest.license ?? 'no license field'})\n\n${texts.join('\n\n')}\n`;
  })
  .sort();

if (problems.size > 0) {
  process.stderr.write(
    `bundle-bin: ${app.name} cannot be published as built:\n${[...problems].map((p) => `  - ${p}`).join('\n')}\n` +
      `A package bundled code imports belongs in the "dependencies" of ${app.name}'s package.json, with the range the bundled package declares; a package bundled with --bundle, in its devDependencies alone.\n`,
  );
  process.exit(1);
}
for (const file of result.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, file.contents);
}
if (licences.length > 0) {
  writeFileSync(
    join(appDir, 'dist/THIRD-PARTY-LICENSES.txt'),
    `${app.name}'s bundle (dist/main.js and dist/chunks/) holds the code of these packages, under these licences.\n\n${licences.join(`\n${'-'.repeat(72)}\n\n`)}`,
  );
}
const firstParty = new Set(
  Object.keys(result.metafile.inputs)
    .filter((file) => !file.includes('node_modules/'))
    .map((file) => owner(join(appDir, file)).name),
);
const kib = (statSync(outfile).size / 1024).toFixed(0);
process.stdout.write(
  `bundle-bin: dist/main.js ${kib} KiB (${[...firstParty].sort().join(', ')}${thirdParty.size > 0 ? `; ${thirdParty.size} third-party packages, licences in dist/THIRD-PARTY-LICENSES.txt` : ''}); externals: dependencies only\n`,
);
