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
 * exporter's and the dashboard's library entries); the tarball's `files` take only main.js.
 *
 * The build fails when bundled code imports a package that is not one of the app's runtime
 * dependencies, or one that the app and a bundled workspace package declare with different
 * ranges: a published binary would otherwise fail at startup on another machine, or run with a
 * version its bundled code was never tested with.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';

/** @typedef {{ name: string, private?: boolean, dependencies?: Record<string, string>, devDependencies?: Record<string, string>, peerDependencies?: Record<string, string>, optionalDependencies?: Record<string, string> }} Manifest */

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
/** @type {import('esbuild').Plugin} */
const onlyRuntimeDependencies = {
  name: 'only-runtime-dependencies',
  setup(build) {
    // Bare specifiers only: relative imports are the app's or a bundled package's own files.
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (isBuiltin(args.path)) return { external: true };
      const name = packageName(args.path);
      if (bundled.has(name)) return undefined;
      const from = owner(args.importer);
      const where = `${relative(appDir, args.importer)} (${from.name})`;
      const range = runtime[name];
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

const outfile = join(appDir, 'dist/main.js');
const result = await esbuild.build({
  entryPoints: [outfile],
  outfile,
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
  // Written below, and only if the checks pass: a failed build leaves tsc's output, which still
  // runs in the workspace.
  write: false,
});
if (problems.size > 0) {
  process.stderr.write(
    `bundle-bin: ${app.name} cannot be published as built:\n${[...problems].map((p) => `  - ${p}`).join('\n')}\n` +
      `Add each to the "dependencies" of ${app.name}'s package.json, with the range the bundled package declares.\n`,
  );
  process.exit(1);
}
for (const file of result.outputFiles) writeFileSync(file.path, file.contents);
const inputs = new Set(Object.keys(result.metafile.inputs).map((file) => owner(join(process.cwd(), file)).name));
const kib = (statSync(outfile).size / 1024).toFixed(0);
process.stdout.write(
  `bundle-bin: dist/main.js ${kib} KiB (${[...inputs].sort().join(', ')}); externals: dependencies only\n`,
);
