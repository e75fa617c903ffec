/**
 * The example env files of the systemd units list every setting of their binary, commented out,
 * with its description and default — checked here against the master's settings schema (the
 * exporter's file is checked against its `--help` in `exporter-env.e2e.test.ts`, since the
 * exporter package does not export its schema).
 */
import { loadConfig, settings } from '@maintd/master';
import { describe, expect, it } from 'vitest';
import { SERVICES, parseEnvFile, readRepoFile, squash, uncommented } from './deploy-files.js';

const MASTER_ENV = 'deploy/systemd/maintd.env';

describe('deploy/systemd/*.env: shape', () => {
  for (const { envFile } of SERVICES) {
    it(`${envFile} sets nothing: every setting is commented out, once, with a comment above it`, () => {
      const { entries, active } = parseEnvFile(readRepoFile(`deploy/systemd/${envFile}`));
      expect(active).toEqual([]);
      expect(entries.length).toBeGreaterThan(0);
      const names = entries.map((e) => e.name);
      expect(
        names.filter((n, i) => names.indexOf(n) !== i),
        'listed twice',
      ).toEqual([]);
      for (const e of entries) expect(e.comment, `${e.name} (line ${e.line}) has no description`).not.toBe('');
    });
  }

  it('would report an active line and a setting without a description', () => {
    const { entries, active } = parseEnvFile('# about\n#A=1\n\n#B=2\nC=3\n');
    expect(active).toEqual(['C=3']);
    expect(entries.map((e) => [e.name, e.value, e.comment])).toEqual([
      ['A', '1', 'about'],
      ['B', '2', ''],
    ]);
  });
});

describe('deploy/systemd/maintd.env: every master setting (the @maintd/master schema)', () => {
  const { entries } = parseEnvFile(readRepoFile(MASTER_ENV));

  it('lists exactly the settings `maintd --help` lists, in the same order', () => {
    expect(entries.map((e) => e.name)).toEqual(settings.map((s) => s.env));
  });

  it('gives each its default as the value and its description in the comment', () => {
    for (const s of settings) {
      const e = entries.find((x) => x.name === s.env);
      if (!e) continue; // reported by the test above
      // No default (or an empty one): the line is `#NAME=` and the comment names the default.
      expect(e.value, s.env).toBe(s.default ?? '');
      if (!s.default) expect(e.comment, s.env).toContain(`Default: ${s.defaultText}`);
      expect(squash(e.comment), s.env).toContain(squash(s.description));
    }
  });

  it('changes nothing when every line is uncommented as it stands', () => {
    const input = { argv: [], hostname: 'host', pid: 1, random: () => 'abc' };
    const defaults = loadConfig({ ...input, env: {} });
    const fromFile = loadConfig({ ...input, env: uncommented(entries) });
    expect(defaults.action).toBe('run');
    expect(fromFile).toEqual(defaults);
  });
});
