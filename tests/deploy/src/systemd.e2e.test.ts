/**
 * systemd itself checks the units and the sysusers file (Debian's `systemd` package:
 * `systemd-analyze`, `systemd-sysusers`; `.ci/run` installs it when missing). Neither needs a
 * running systemd: both work on files in a temporary directory.
 */
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, SYSTEMD_DIR, run } from './deploy-files.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maintd-systemd-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A copy of `unit` in the temp dir whose ExecStart names a stub executable there.
 *
 * `systemd-analyze verify` fails a unit whose ExecStart binary does not exist, and the units
 * name `/usr/local/bin/maintd` and `/usr/local/bin/maintd-exporter`, where `npm i -g` puts
 * them on a real host but not on a test machine. So the copy runs `<dir>/<bin>` instead, a
 * shell stub; every other line is verified as shipped.
 */
async function withStubExecStart(unit: string, bin: string): Promise<string> {
  const stub = join(dir, bin);
  await writeFile(stub, '#!/bin/sh\nexit 0\n');
  await chmod(stub, 0o755);
  const text = await readFile(join(SYSTEMD_DIR, unit), 'utf8');
  const execStart = `ExecStart=/usr/local/bin/${bin}`;
  expect(text).toContain(execStart);
  const copy = join(dir, unit);
  await writeFile(copy, text.replace(execStart, `ExecStart=${stub}`));
  return copy;
}

describe('deploy/systemd, checked by systemd', () => {
  for (const { unit, bin } of SERVICES) {
    it(`systemd-analyze verify accepts ${unit} without a warning`, async () => {
      const copy = await withStubExecStart(unit, bin);
      const r = await run('systemd-analyze', ['verify', '--man=no', copy]);
      // Unknown directives and unparsable values are warnings with exit code 0: fail on any output.
      expect(r.stderr + r.stdout).toBe('');
      expect(r.code).toBe(0);
    });

    it(`systemd-analyze security rates ${unit}'s sandbox as OK (exposure ≤ 2.0 of 10)`, async () => {
      const copy = await withStubExecStart(unit, bin);
      const r = await run('systemd-analyze', ['security', '--offline=true', '--no-pager', copy]);
      expect(r.code, r.stderr).toBe(0);
      const m = /Overall exposure level for \S+: ([\d.]+) (\w+)/.exec(r.stdout);
      expect(m, r.stdout).not.toBeNull();
      expect(Number(m?.[1])).toBeLessThanOrEqual(2);
      expect(m?.[2]).toBe('OK');
    });
  }

  it('systemd-analyze verify reports what it would not accept (the check is live)', async () => {
    const bad = join(dir, 'bad.service');
    await writeFile(bad, '[Service]\nExecStart=/nonexistent/maintd\nProtectSystem=stricter\n');
    const r = await run('systemd-analyze', ['verify', '--man=no', bad]);
    expect(r.stderr).toMatch(/ProtectSystem|stricter/);
    expect(r.stderr).toMatch(/not executable|No such file/);
    expect(r.code).not.toBe(0);
  });

  it('systemd-sysusers creates both service users from maintd.sysusers.conf', async () => {
    // A throwaway root with empty account databases; --dry-run writes nothing even there.
    const root = join(dir, 'root');
    await mkdir(join(root, 'etc/sysusers.d'), { recursive: true });
    await copyFile(join(SYSTEMD_DIR, 'maintd.sysusers.conf'), join(root, 'etc/sysusers.d/maintd.conf'));
    for (const db of ['passwd', 'group', 'shadow', 'gshadow']) await writeFile(join(root, 'etc', db), '');
    const r = await run('systemd-sysusers', ['--dry-run', `--root=${root}`]);
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout + r.stderr;
    for (const { unit } of SERVICES) {
      const user = unit.replace(/\.service$/, '');
      expect(out).toMatch(new RegExp(`Creating user '${user}'`));
    }
    // A bad line is logged and skipped with exit code 0: fail on any complaint.
    expect(out).not.toMatch(/fail|invalid|ignor/i);
  });
});
