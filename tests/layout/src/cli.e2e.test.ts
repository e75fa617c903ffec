/**
 * One command-line style across the four binaries (`maintd`, `maintd-exporter`, `maintd-top`,
 * `maintd-sim` and each of its commands): `--version`/`-V` prints `<program> <version>` (the
 * version of the binary's package), `--help`/`-h` prints one layout, both exit 0, and a bad flag
 * exits 2 with a pointer to the help. Runs the built binaries (turbo builds them first: this
 * package depends on the apps).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Binary {
  readonly program: string;
  readonly app: string;
  readonly bin: string;
  /** Arguments before the flag under test (a command). */
  readonly command?: string;
}

const BINARIES: readonly Binary[] = [
  { program: 'maintd', app: 'apps/master', bin: 'bin/maintd.js' },
  { program: 'maintd-exporter', app: 'apps/exporter', bin: 'bin/maintd-exporter.js' },
  { program: 'maintd-top', app: 'apps/tui', bin: 'bin/maintd-top.js' },
  { program: 'maintd-sim', app: 'apps/sim', bin: 'bin/maintd-sim.js' },
  { program: 'maintd-sim', app: 'apps/sim', bin: 'bin/maintd-sim.js', command: 'workers' },
  { program: 'maintd-sim', app: 'apps/sim', bin: 'bin/maintd-sim.js', command: 'incident' },
];

/** Section titles a help page may have, in the one vocabulary. */
const SECTIONS = new Set(['Options', 'Settings', 'Commands', 'Keys']);
const EXIT_CODES = 'Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.';

function run(b: Binary, flag: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = [join(ROOT, b.app, b.bin), ...(b.command ? [b.command] : []), flag];
  return new Promise((resolve) => {
    // No environment beyond PATH: nothing from the test's own shell may change the output.
    execFile(process.execPath, args, { env: { PATH: process.env.PATH ?? '' } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

const version = (app: string): string =>
  (JSON.parse(readFileSync(join(ROOT, app, 'package.json'), 'utf8')) as { version: string }).version;

// Each case starts node a few times; on a busy two-core runner that takes seconds, not 5.
describe.concurrent('every binary and command', { timeout: 60_000 }, () => {
  for (const b of BINARIES) {
    const name = b.command ? `${b.program} ${b.command}` : b.program;

    it(`${name}: --version and -V print "${b.program} <version>" and exit 0`, async ({ expect }) => {
      for (const flag of ['--version', '-V']) {
        const r = await run(b, flag);
        expect({ flag, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
          flag,
          code: 0,
          stdout: `${b.program} ${version(b.app)}\n`,
          stderr: '',
        });
      }
    });

    it(`${name}: --help and -h print the one help layout and exit 0`, async ({ expect }) => {
      const long = await run(b, '--help');
      const short = await run(b, '-h');
      expect(long.code, long.stderr).toBe(0);
      expect(short).toEqual(long);
      const lines = long.stdout.split('\n');
      expect(lines[0]).toMatch(new RegExp(`^Usage: ${name} `));
      expect(lines.at(-1)).toBe('');
      expect(lines.at(-2)).toBe(EXIT_CODES);
      // Sections: `Title:` after a blank line, entries indented two spaces, descriptions six.
      const titles = lines.filter((l) => /^[A-Z][a-z]+:$/.test(l)).map((l) => l.slice(0, -1));
      expect(titles.length).toBeGreaterThan(0);
      for (const t of titles) expect(SECTIONS, `section ${t}`).toContain(t);
      expect(titles[0] === 'Commands' ? titles[1] : titles[0]).toBe('Options');
      expect(long.stdout).toContain(
        '\nOptions:\n  -h, --help\n      Show this help and exit.\n  -V, --version\n      Print the version and exit.\n',
      );
      for (const [i, l] of lines.entries()) {
        if (l === '' || i === 0 || !/^\s/.test(l)) continue;
        expect(l, `line ${i + 1}: ${l}`).toMatch(/^( {2}\S| {6}\S| {7}\S)/);
      }
    });

    it(`${name}: a bad flag exits 2, pointing at --help`, async ({ expect }) => {
      const r = await run(b, '--no-such-flag');
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^${b.program}: .*no-such-flag`));
      expect(r.stderr).toContain(`Run '${name} --help'`);
    });
  }
});
