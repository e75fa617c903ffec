import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@maintd/core/testing';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokenDigest } from './api-token.js';
import { TokensFile, readTokensFile } from './tokens-file.js';

const line = (name: string, scope: string, token: string): string =>
  `${name} ${scope} sha256:${tokenDigest(token).toString('hex')}\n`;

let dir: string;
let path: string;

async function write(text: string, mode = 0o600): Promise<void> {
  await writeFile(path, text, { mode });
  await chmod(path, mode);
}

function capture(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({}, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maintd-tokens-'));
  path = join(dir, 'tokens');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readTokensFile', () => {
  it('reads an owner-only file of named tokens', async () => {
    await write(line('alice', 'operate', 'a') + line('ro', 'read', 'r'));
    expect((await readTokensFile(path, false)).tokens.map((t) => `${t.name}:${t.scope}`)).toEqual([
      'alice:operate',
      'ro:read',
    ]);
  });

  it('refuses a file group or others may read, naming the setting, the path and the fix', async () => {
    await write(line('alice', 'operate', 'a'), 0o640);
    await expect(readTokensFile(path, false)).rejects.toThrow(
      `MASTER_API_TOKENS_FILE: '${path}' is readable or writable by group or others (mode 640): chmod 600 it`,
    );
    await chmod(path, 0o604);
    await expect(readTokensFile(path, false)).rejects.toThrow(/mode 604/);
  });

  it('refuses a missing file and a malformed one, naming the line', async () => {
    await expect(readTokensFile(path, false)).rejects.toThrow(
      `MASTER_API_TOKENS_FILE: '${path}' cannot be read: ENOENT`,
    );
    await write(`# ok\nalice write sha256:${'0'.repeat(64)}\n`);
    await expect(readTokensFile(path, false)).rejects.toThrow(
      `MASTER_API_TOKENS_FILE: '${path}' line 2: the scope of "alice" must be read or operate`,
    );
  });

  it('refuses the name default beside MASTER_API_TOKEN, and allows it alone', async () => {
    await write(line('default', 'read', 'd'));
    await expect(readTokensFile(path, true)).rejects.toThrow(/names a token "default", the name MASTER_API_TOKEN/);
    expect((await readTokensFile(path, false)).tokens).toHaveLength(1);
  });
});

describe('TokensFile', () => {
  it('holds the file’s certificate subjects beside its tokens, and reloads them', async () => {
    await write(line('alice', 'read', 'a') + 'ops operate subject:CN=ops,O=example\n');
    const { logger, lines } = capture();
    const file = await TokensFile.open(path, undefined, logger);
    try {
      expect(file.subjects()).toEqual([{ name: 'ops', scope: 'operate', subject: 'CN=ops,O=example' }]);
      await write(line('alice', 'read', 'a') + 'viewer read subject:CN=viewer,O=example\n');
      await eventually(() => expect(file.subjects().map((g) => g.name)).toEqual(['viewer']), 10_000);
      expect(JSON.stringify(lines)).not.toContain('CN=viewer');
    } finally {
      file.close();
    }
  });

  it('holds MASTER_API_TOKEN as the operate token default beside the file’s tokens', async () => {
    await write(line('alice', 'read', 'a'));
    const file = await TokensFile.open(path, 'the-default', capture().logger);
    try {
      expect(file.tokens().map((t) => `${t.name}:${t.scope}`)).toEqual(['default:operate', 'alice:read']);
    } finally {
      file.close();
    }
  });

  it('takes a changed file into force, and keeps the previous tokens when the new version is bad', async () => {
    await write(line('alice', 'read', 'a'));
    const { logger, lines } = capture();
    const file = await TokensFile.open(path, undefined, logger);
    try {
      await write(line('alice', 'read', 'a') + line('bob', 'operate', 'b'));
      await eventually(() => expect(file.tokens().map((t) => t.name)).toEqual(['alice', 'bob']), 10_000);
      await write('bob operate not-a-digest-at-all\n');
      await eventually(() => expect(lines.some((l) => l.level === 50)).toBe(true), 10_000);
      expect(file.tokens().map((t) => t.name)).toEqual(['alice', 'bob']);
      const refused = lines.find((l) => l.level === 50);
      expect(refused?.msg).toMatch(/^MASTER_API_TOKENS_FILE not reloaded, the previous tokens stay in force: .*line 1/);
      expect(JSON.stringify(lines)).not.toContain('not-a-digest-at-all');
      await write(line('carol', 'read', 'c'), 0o644);
      await eventually(() => expect(lines.filter((l) => l.level === 50)).toHaveLength(2), 10_000);
      expect(file.tokens().map((t) => t.name)).toEqual(['alice', 'bob']);
    } finally {
      file.close();
    }
  });
});
