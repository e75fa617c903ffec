/**
 * deploy/systemd/maintd-exporter.env lists every exporter setting, commented out, with its
 * description and default. `@maintd/exporter` exports no settings list, so the reference is
 * what its binary prints: `maintd-exporter --help` (one `(env NAME; default: X)` line per
 * setting, its description on the next) and `--print-config`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EXPORTER_BIN, parseEnvFile, readRepoFile, run, squash, uncommented } from './deploy-files.js';

interface HelpSetting {
  readonly name: string;
  readonly defaultText: string;
  readonly description: string;
}

/** Default texts `--help` prints for a setting that has no value by default. */
const NO_DEFAULT = new Set(['unset', 'none', 'empty']);

/** The settings `--help` documents, in order. */
function helpSettings(help: string): HelpSetting[] {
  const lines = help.split('\n');
  return lines.flatMap((line, i) => {
    const m = /\(env ([A-Z][A-Z0-9_]*); default: ([^;)]*)/.exec(line);
    return m ? [{ name: m[1]!, defaultText: m[2]!, description: (lines[i + 1] ?? '').trim() }] : [];
  });
}

describe('deploy/systemd/maintd-exporter.env: every exporter setting (maintd-exporter --help)', () => {
  const { entries } = parseEnvFile(readRepoFile('deploy/systemd/maintd-exporter.env'));
  let documented: HelpSetting[];

  beforeAll(async () => {
    const r = await run(process.execPath, [EXPORTER_BIN, '--help']);
    expect(r.code, r.stderr).toBe(0);
    documented = helpSettings(r.stdout);
    expect(documented.map((s) => s.name)).toContain('EXPORTER_PORT');
  });

  it('lists exactly the settings `maintd-exporter --help` lists, in the same order', () => {
    expect(entries.map((e) => e.name)).toEqual(documented.map((s) => s.name));
  });

  it('gives each its default as the value and its description in the comment', () => {
    for (const s of documented) {
      const e = entries.find((x) => x.name === s.name);
      if (!e) continue; // reported by the test above
      if (NO_DEFAULT.has(s.defaultText)) {
        expect(e.value, s.name).toBe('');
        expect(e.comment, s.name).toContain(`Default: ${s.defaultText}`);
      } else {
        expect(e.value, s.name).toBe(s.defaultText);
      }
      expect(squash(e.comment), s.name).toContain(squash(s.description));
    }
  });

  it('changes nothing when every line is uncommented as it stands (ETCD_ENDPOINTS aside: it is required)', async () => {
    const required = { ETCD_ENDPOINTS: 'http://127.0.0.1:2379' };
    const defaults = await run(process.execPath, [EXPORTER_BIN, '--print-config'], { env: required });
    const fromFile = await run(process.execPath, [EXPORTER_BIN, '--print-config'], {
      env: { ...uncommented(entries), ...required },
    });
    expect(defaults.code, defaults.stderr).toBe(0);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toBe(defaults.stdout);
    expect(defaults.stdout).toContain('EXPORTER_PORT=9464');
  });
});
