import { type KeyObject, X509Certificate, createPrivateKey } from 'node:crypto';

/**
 * Every certificate of a PEM text, parsed, or why not: none in it, or the 1-based `index` of one
 * that does not parse with OpenSSL's `message`. The caller words the refusal, naming its setting
 * or option (docs/ARCHITECTURE.md §3.4).
 */
export type ParsedCertificates =
  | { readonly ok: true; readonly certificates: readonly [X509Certificate, ...X509Certificate[]] }
  | { readonly ok: false; readonly index?: undefined }
  | { readonly ok: false; readonly index: number; readonly message: string };

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Parses each `-----BEGIN CERTIFICATE-----` block of `pem`, in order (a leaf, then its chain). */
export function parsePemCertificates(pem: string): ParsedCertificates {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  const out: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      out.push(new X509Certificate(block));
    } catch (err) {
      return { ok: false, index: i + 1, message: (err as Error).message };
    }
  }
  const [first, ...rest] = out;
  return first === undefined ? { ok: false } : { ok: true, certificates: [first, ...rest] };
}

/**
 * Whether a certificate and a PEM private key make a usable pair at `nowMs`, or why not: the key
 * does not parse (OpenSSL's `message`; `encrypted` when it is passphrase-protected), it is not the
 * certificate's, or the certificate is not valid yet or any more. The caller words the refusal.
 */
export type CheckedKeyPair =
  | {
      readonly ok: true;
      readonly problem?: undefined;
      readonly key: KeyObject;
      readonly notBeforeMs: number;
      readonly notAfterMs: number;
    }
  | { readonly ok: false; readonly problem: 'key'; readonly message: string; readonly encrypted: boolean }
  | { readonly ok: false; readonly problem: 'mismatch' }
  | { readonly ok: false; readonly problem: 'not-yet-valid'; readonly notBeforeMs: number }
  | { readonly ok: false; readonly problem: 'expired'; readonly notAfterMs: number };

/** Checks `keyPem` against the leaf certificate `cert` at `nowMs` ({@link CheckedKeyPair}). */
export function checkKeyPair(cert: X509Certificate, keyPem: string, nowMs: number): CheckedKeyPair {
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    const message = (err as Error).message;
    const encrypted = /passphrase|encrypted|bad decrypt/i.test(message) || keyPem.includes('ENCRYPTED');
    return { ok: false, problem: 'key', message, encrypted };
  }
  if (!cert.checkPrivateKey(key)) return { ok: false, problem: 'mismatch' };
  const notBeforeMs = Date.parse(cert.validFrom);
  const notAfterMs = Date.parse(cert.validTo);
  if (!(nowMs >= notBeforeMs)) return { ok: false, problem: 'not-yet-valid', notBeforeMs };
  if (!(nowMs < notAfterMs)) return { ok: false, problem: 'expired', notAfterMs };
  return { ok: true, key, notBeforeMs, notAfterMs };
}
