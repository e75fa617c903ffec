import { X509Certificate } from 'node:crypto';

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
