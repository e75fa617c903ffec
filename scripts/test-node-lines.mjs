// @ts-check
/**
 * `pnpm test`, the command `.ci/run` runs: builds once, on this machine's Node, then runs every
 * package's tests on each Node line CI covers — this machine's and Node 24 — from that one build
 * (the build output is plain JS: nothing is compiled per line). Each line's results go to
 * `test-results/node<major>/vitest.json` in each package, so the lines never overwrite each other
 * and `.ci/run` sums both; every output line is prefixed with its Node line.
 *
 * Why the order: on a 2-core machine most packages' tests wait on etcd, timers and child
 * processes, so the light packages of both lines run side by side; the heavy suites start many
 * processes and judge timings (lease expiries, load figures), so they run alone, one at a time,
 * after them (docs/ARCHITECTURE.md §7).
 *
 * Node 24 is the registry's official binary (`node-<platform>-<arch>` on npm), fetched once with
 * `npm pack` and cached under `${XDG_CACHE_HOME:-~/.cache}/maintd-node/v24`; it is used only
 * after `node --version` says it is that line.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The line tested beside this machine's: the newest one the packages' engines accept. */
const OTHER_LINE = 24;

/**
 * Suites that start many processes (etcd clusters, several masters, packing and installing
 * releases) and judge timings: each runs alone. Everything else is light.
 */
const HEAVY = ['@maintd/faults', '@maintd/upgrade', '@maintd/release-tests'];

/**
 * Light packages run one at a time per line, the two lines side by side: each vitest run already
 * starts a worker per core, so two runs keep both cores busy. Two per line (four runs) starved the
 * CPU-bound tests (the simulator's incident runs, the dashboard's sort check) past their timeouts.
 */
const LIGHT_CONCURRENCY = 1;

const root = fileURLToPath(new URL('..', import.meta.url));

/** @param {string} message */
const say = (message) => console.log(`test: ${message}`);

/**
 * Runs a command, its output prefixed line by line, and resolves to its exit code.
 * @param {string} prefix
 * @param {string} command
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<number>}
 */
function run(prefix, command, args, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        console.log(`${prefix}${line}`);
      });
    }
    child.on('error', (error) => {
      console.log(`${prefix}${command}: ${error.message}`);
      resolve(127);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/**
 * A command's standard output, or undefined when it fails to start or exits non-zero.
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<string | undefined>}
 */
function output(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (text += chunk));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? text : undefined));
  });
}

/**
 * The Node binary of a line: this process's own for this machine's line, else the cached
 * official binary, fetched from the npm registry when the cache lacks it.
 * @param {number} major
 * @returns {Promise<string>}
 */
async function nodeOfLine(major) {
  const isLine = (/** @type {string | undefined} */ version) => version?.trim().startsWith(`v${major}.`) === true;
  if (isLine(process.version)) return process.execPath;
  const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'maintd-node');
  const dir = join(cache, `v${major}`);
  const bin = join(dir, 'bin', 'node');
  if (isLine(await output(bin, ['--version']))) return bin;

  const spec = `node-${process.platform}-${process.arch}@${major}`;
  say(`fetching Node ${major} (${spec} from the npm registry) into ${dir}`);
  await mkdir(cache, { recursive: true });
  // Unpacked beside the cache and moved in whole, so a fetch cut short leaves no half binary.
  const temp = await mkdtemp(join(cache, '.fetch-'));
  try {
    const packed = await output('npm', ['pack', spec, '--json', '--silent', '--pack-destination', temp]);
    const file = packed === undefined ? undefined : JSON.parse(packed)[0]?.filename;
    if (typeof file !== 'string') throw new Error(`npm pack ${spec} failed`);
    if ((await run('', 'tar', ['-xzf', join(temp, file), '-C', temp])) !== 0)
      throw new Error(`could not unpack ${file}`);
    await rm(dir, { recursive: true, force: true });
    await rename(join(temp, 'package'), dir);
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  const version = await output(bin, ['--version']);
  if (!isLine(version)) throw new Error(`${bin} --version said ${version?.trim() ?? 'nothing'}, not v${major}`);
  return bin;
}

/**
 * One Node line: its label, its binary and the environment that puts that binary first on PATH
 * (pnpm, vitest and every binary a test spawns run on the `node` PATH finds).
 * @param {number} major
 */
async function line(major) {
  const bin = await nodeOfLine(major);
  const env =
    bin === process.execPath
      ? process.env
      : { ...process.env, PATH: `${dirname(bin)}${delimiter}${process.env.PATH ?? ''}` };
  return { major, label: `node ${major}`, env };
}

/**
 * Runs the `test` task of some packages on one line (no build: that ran once, before).
 * @param {Awaited<ReturnType<typeof line>>} nodeLine
 * @param {string[]} filters turbo `--filter`s
 * @param {number} concurrency
 */
function testOn(nodeLine, filters, concurrency) {
  return run(
    `[${nodeLine.label}] `,
    'turbo',
    [
      'run',
      'test',
      '--only',
      '--continue',
      `--concurrency=${concurrency}`,
      ...filters.map((f) => `--filter=${f}`),
      '--',
      `--outputFile.json=test-results/node${nodeLine.major}/vitest.json`,
    ],
    nodeLine.env,
  );
}

const machineMajor = Number(process.versions.node.split('.')[0]);
const majors = [...new Set([machineMajor, OTHER_LINE])];
const { engines } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
say(`Node lines ${majors.join(' and ')} (engines: ${engines?.node ?? 'none'})`);

/** @type {Awaited<ReturnType<typeof line>>[]} */
const lines = [];
for (const major of majors) {
  try {
    lines.push(await line(major));
  } catch (error) {
    say(`node ${major}: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}

/**
 * Runs one step and says how long it took.
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} step
 * @returns {Promise<T>}
 */
async function timed(name, step) {
  const start = performance.now();
  const result = await step();
  const secs = Math.round((performance.now() - start) / 1000);
  say(`${name} took ${Math.floor(secs / 60)} min ${secs % 60} s`);
  return result;
}

if ((await timed('the build', () => run('', 'turbo', ['run', 'build']))) !== 0) {
  say('the build failed; no tests ran');
  process.exit(1);
}

/** @type {string[]} */
const failed = [];
const light = HEAVY.map((name) => `!${name}`);
const lightCodes = await timed(`the light packages on ${lines.map((l) => l.label).join(' and ')}`, () =>
  Promise.all(lines.map((l) => testOn(l, light, LIGHT_CONCURRENCY))),
);
lines.forEach(
  (l, i) => lightCodes[i] !== 0 && failed.push(`${l.label}: light packages (turbo exited ${lightCodes[i]})`),
);
for (const l of lines) {
  const code = await timed(`the heavy suites on ${l.label}`, () => testOn(l, HEAVY, 1));
  if (code !== 0) failed.push(`${l.label}: heavy suites (turbo exited ${code})`);
}
for (const f of failed) say(`failed on ${f}`);
process.exitCode = failed.length === 0 ? 0 : 1;
