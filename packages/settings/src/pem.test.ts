import { readFile } from 'node:fs/promises';
import { type TestCa, createTestCa } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePemCertificates } from './pem.js';

let ca: TestCa;
let leaf: string;
let root: string;
beforeAll(async () => {
  ca = await createTestCa();
  leaf = await readFile((await ca.issue('leaf')).cert, 'utf8');
  root = await readFile(ca.caCert, 'utf8');
});
afterAll(() => ca.remove());

describe('parsePemCertificates', () => {
  it('parses every certificate of a bundle, in order', () => {
    const parsed = parsePemCertificates(leaf + root);
    expect(parsed.ok && parsed.certificates.map((c) => c.subject)).toEqual([
      'CN=leaf',
      expect.stringMatching(/^CN=maintd-test-ca-/),
    ]);
  });

  it('says when the text holds no certificate at all', () => {
    expect(parsePemCertificates('hello\n')).toEqual({ ok: false });
  });

  it('names the first block that does not parse, counting from 1', () => {
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    const parsed = parsePemCertificates(leaf + broken);
    expect(parsed.ok === false && parsed.index).toBe(2);
    expect(parsed.ok === false && parsed.index !== undefined && parsed.message.length > 0).toBe(true);
  });
});
