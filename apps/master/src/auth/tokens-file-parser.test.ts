import { describe, expect, it } from 'vitest';
import { tokenDigest } from './api-token.js';
import { parseTokensFile } from './tokens-file-parser.js';

const hexOf = (token: string): string => tokenDigest(token).toString('hex');

function errorOf(text: string): string {
  const r = parseTokensFile(text);
  if (r.ok) throw new Error(`expected an error, got ${r.tokens.length} tokens`);
  return r.error;
}

describe('parseTokensFile', () => {
  it('reads one named token a line with its scope and digest, skipping comments and blank lines', () => {
    const r = parseTokensFile(
      [
        '# who may do what',
        '',
        `alice operate sha256:${hexOf('a-token')}   # on call`,
        `  grafana.ro   read   sha256:${hexOf('g-token').toUpperCase()}`,
        '   ',
      ].join('\n'),
    );
    expect(r.ok && r.tokens.map((t) => ({ ...t, digest: t.digest.toString('hex') }))).toEqual([
      { name: 'alice', scope: 'operate', digest: hexOf('a-token') },
      { name: 'grafana.ro', scope: 'read', digest: hexOf('g-token') },
    ]);
  });

  it('accepts an empty file and CRLF line ends', () => {
    expect(parseTokensFile('')).toEqual({ ok: true, tokens: [], subjects: [] });
    const r = parseTokensFile(`# x\r\nbob read sha256:${hexOf('b')}\r\n`);
    expect(r.ok && r.tokens.map((t) => t.name)).toEqual(['bob']);
  });

  it('names the line and what is wrong with it', () => {
    const ok = `sha256:${hexOf('t')}`;
    expect(errorOf(`# c\n\nalice operate`)).toBe(
      'line 3: expected "<name> <read|operate> sha256:<64 hex digits>", got 2 fields',
    );
    expect(errorOf(`alice operate ${ok} extra`)).toMatch(/^line 1: expected .*got 4 fields$/);
    expect(errorOf(`al/ice read ${ok}`)).toBe('line 1: the name must be 1 to 64 of A-Z a-z 0-9 _ . -');
    expect(errorOf(`${'a'.repeat(65)} read ${ok}`)).toMatch(/^line 1: the name must be/);
    expect(errorOf(`alice admin ${ok}`)).toBe('line 1: the scope of "alice" must be read or operate');
    expect(errorOf(`alice read ${ok}\nbob read ${ok}\nalice operate ${ok}`)).toBe(
      'line 3: the name "alice" is already used on line 1',
    );
    expect(errorOf(`alice read sha256:${hexOf('t').slice(1)}`)).toBe(
      'line 1: the digest of "alice" must be sha256: and 64 hex digits',
    );
    expect(errorOf(`alice read sha256:${'g'.repeat(64)}`)).toMatch(/^line 1: the digest of "alice"/);
  });

  it('refuses a token written in place of its digest without echoing it', () => {
    const error = errorOf('alice operate s3cret-token-value');
    expect(error).toMatch(/^line 1: the credential of "alice" must be sha256:<64 hex digits>/);
    expect(error).not.toContain('s3cret');
  });

  it('maps a client certificate subject, the rest of its line, spaces included, to a name and scope', () => {
    const r = parseTokensFile(
      [
        `alice operate sha256:${hexOf('a')}`,
        'ops-bot   operate   subject:CN=Ops Bot, OU=sre,O=Example\\, Inc   # the deploy robot',
        'grafana read subject:cn=grafana',
      ].join('\n'),
    );
    expect(r.ok && r.tokens.map((t) => t.name)).toEqual(['alice']);
    expect(r.ok && r.subjects).toEqual([
      { name: 'ops-bot', scope: 'operate', subject: 'CN=Ops Bot,OU=sre,O=Example\\, Inc' },
      { name: 'grafana', scope: 'read', subject: 'CN=grafana' },
    ]);
  });

  it('refuses a malformed or repeated subject without quoting it, and other credential forms', () => {
    expect(errorOf('alice operate subject:')).toBe('line 1: the subject of "alice" is malformed: the subject is empty');
    expect(errorOf('alice operate subject:CN=secret-name,')).toBe(
      'line 1: the subject of "alice" is malformed: expected TYPE=value at character 16',
    );
    expect(errorOf('alice operate subject:CN=a,O=x\nbob read subject:cn=a, o=x')).toBe(
      'line 2: the subject of "bob" is already mapped to "alice" on line 1',
    );
    expect(errorOf(`alice read subject:CN=a\nalice read sha256:${hexOf('t')}`)).toBe(
      'line 2: the name "alice" is already used on line 1',
    );
    expect(errorOf('alice operate spiffe://example/alice')).toBe(
      'line 1: the credential form "spiffe:" of "alice" is not supported (only sha256:<64 hex digits> or subject:<certificate subject>)',
    );
  });
});
