/**
 * An endpoint's TLS files checked before use (docs/ARCHITECTURE.md §3.4): at startup a bad file
 * stops the daemon (exit 2) naming the setting and the reason, and on a reload it leaves the
 * previous certificate in force. The checks are the ones a handshake would otherwise fail on,
 * long after startup said nothing: the PEM parses, the key is the certificate's, and the
 * certificate is valid now.
 */
import type { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type SecureContextOptions, createSecureContext } from 'node:tls';
import { checkKeyPair, parsePemCertificates } from './pem.js';
import type { ServerTlsConfig } from './server-tls-settings.js';

/** The served certificate, as logs and metrics describe it (never the key). */
export interface ServedCertificate {
  /** Hex, as `openssl x509 -serial` prints it. */
  readonly serialNumber: string;
  /** SHA-256 fingerprint, colon-separated hex. */
  readonly fingerprint256: string;
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
}

/** Checked TLS material: what `tls.createSecureContext` takes, and the certificate it serves. */
export interface ServerTlsMaterial {
  /** TLS 1.2 or later; `ca` = the client CA when mutual TLS is on. */
  readonly context: SecureContextOptions;
  readonly certificate: ServedCertificate;
}

/** The text of an endpoint's three files. */
export interface ServerTlsPems {
  readonly cert: string;
  readonly key: string;
  readonly clientCa: string | undefined;
}

/** The outcome of a check: the material, or what is wrong, naming the setting and its path. */
export type CheckedServerTls =
  { readonly ok: true; readonly material: ServerTlsMaterial } | { readonly ok: false; readonly error: string };

/** The setting names and paths of a config, for messages. */
function fileNames(config: ServerTlsConfig) {
  const name = (setting: string, path: string) => `${config.prefix}_TLS_${setting}: '${path}'`;
  return {
    cert: name('CERT', config.cert),
    key: name('KEY', config.key),
    clientCa: config.clientCa === undefined ? '' : name('CLIENT_CA', config.clientCa),
  };
}

/** A check's failure: what is wrong, naming the setting and the path. */
interface Refusal {
  readonly refused: string;
}

const refuse = (refused: string): Refusal => ({ refused });
const isRefusal = (v: unknown): v is Refusal => typeof v === 'object' && v !== null && 'refused' in v;

/** Every certificate of a PEM bundle, parsed; refuses a file with none or a broken one. */
function certificates(pem: string, file: string): readonly X509Certificate[] | Refusal {
  const parsed = parsePemCertificates(pem);
  if (parsed.ok) return parsed.certificates;
  if (parsed.index === undefined) return refuse(`${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return refuse(`${file}: certificate #${parsed.index} does not parse: ${parsed.message}`);
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Checks the files' text at `nowMs`: each certificate parses, the key parses and is the leaf
 * certificate's, the leaf is valid at `nowMs`, and the client CA (if any) parses. Pure but for
 * OpenSSL's parsing.
 */
export function checkServerTls(config: ServerTlsConfig, pems: ServerTlsPems, nowMs: number): CheckedServerTls {
  const r = check(config, pems, nowMs);
  return isRefusal(r) ? { ok: false, error: r.refused } : { ok: true, material: r };
}

function check(config: ServerTlsConfig, pems: ServerTlsPems, nowMs: number): ServerTlsMaterial | Refusal {
  const files = fileNames(config);
  const chain = certificates(pems.cert, files.cert);
  if (isRefusal(chain)) return chain;
  const [leaf] = chain;
  if (leaf === undefined) return refuse(`${files.cert} holds no certificate`);
  const pair = checkKeyPair(leaf, pems.key, nowMs);
  switch (pair.problem) {
    case 'key':
      // OpenSSL's words for an encrypted key are obscure; say what to do instead. The key's text is never quoted.
      return refuse(
        pair.encrypted
          ? `${files.key} is encrypted: maintd reads an unencrypted key (restrict the file's mode instead)`
          : `${files.key} holds no usable PEM private key: ${pair.message}`,
      );
    case 'mismatch':
      return refuse(`${files.key} is not the key of the certificate in ${config.prefix}_TLS_CERT`);
    case 'not-yet-valid':
      return refuse(`${files.cert} is not valid yet (from ${iso(pair.notBeforeMs)})`);
    case 'expired':
      return refuse(`${files.cert} has expired (at ${iso(pair.notAfterMs)})`);
  }
  const { notBeforeMs, notAfterMs } = pair;
  if (pems.clientCa !== undefined) {
    const cas = certificates(pems.clientCa, files.clientCa);
    if (isRefusal(cas)) return cas;
  }
  const context: SecureContextOptions = {
    cert: pems.cert,
    key: pems.key,
    minVersion: 'TLSv1.2',
    ...(pems.clientCa === undefined ? {} : { ca: pems.clientCa }),
  };
  try {
    createSecureContext(context);
  } catch (err) {
    return refuse(`${files.cert} cannot be served: ${(err as Error).message}`);
  }
  return {
    context,
    certificate: { serialNumber: leaf.serialNumber, fingerprint256: leaf.fingerprint256, notBeforeMs, notAfterMs },
  };
}

/** Reads an endpoint's files and checks them at `nowMs` ({@link checkServerTls}); an unreadable file is refused too. */
export async function readServerTls(config: ServerTlsConfig, nowMs: number): Promise<CheckedServerTls> {
  const files = fileNames(config);
  const read = async (path: string, file: string): Promise<string | { error: string }> => {
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      return { error: `${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
    }
  };
  const [cert, key, clientCa] = await Promise.all([
    read(config.cert, files.cert),
    read(config.key, files.key),
    config.clientCa === undefined ? undefined : read(config.clientCa, files.clientCa),
  ]);
  for (const r of [cert, key, clientCa]) if (typeof r === 'object') return { ok: false, error: r.error };
  return checkServerTls(
    config,
    { cert: cert as string, key: key as string, clientCa: clientCa as string | undefined },
    nowMs,
  );
}
