import type { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ValidationError } from '@maintd/core';
import { checkKeyPair, parsePemCertificates } from '@maintd/settings';

/** Where the dashboard's TLS client files are (`--ca`, `--cert`, `--key`); undefined: not used. */
export interface TlsPaths {
  readonly ca?: string | undefined;
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
}

/** The PEM text of those files, checked: what the HTTPS client is built from. */
export interface TlsMaterial {
  /** Every certificate of the `--ca` bundle: the only CAs an https master's certificate may chain to. */
  readonly ca?: string | undefined;
  /** The client certificate (and any intermediates after it), with its key: both or neither. */
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
}

/**
 * Reads and checks the TLS client files before the screen is taken, so a bad one stops the start
 * (exit 2) with a message naming its option, never a TLS error on every request later: each
 * file is read, every certificate parses, the key parses and belongs to the certificate, and the
 * certificate is valid at `nowMs` (an expired one would only be refused by the master).
 * A {@link ValidationError} whose `field` is the option says what is wrong.
 */
export async function loadTlsFiles(paths: TlsPaths, nowMs: number): Promise<TlsMaterial> {
  const ca = paths.ca === undefined ? undefined : await read('--ca', paths.ca);
  if (ca !== undefined) certificates('--ca', paths.ca!, ca);
  if (paths.cert === undefined || paths.key === undefined) return { ca };
  const cert = await read('--cert', paths.cert);
  const key = await read('--key', paths.key);
  const leaf = certificates('--cert', paths.cert, cert)[0]!;
  const pair = checkKeyPair(leaf, key, nowMs);
  switch (pair.problem) {
    case 'key':
      throw bad('--key', paths.key, `not a readable PEM private key (${pair.message})`);
    case 'mismatch':
      throw bad('--key', paths.key, `is not the key of the certificate in ${paths.cert} (--cert)`);
    case 'not-yet-valid':
      throw bad('--cert', paths.cert, `is not valid before ${new Date(pair.notBeforeMs).toISOString()}`);
    case 'expired':
      throw bad('--cert', paths.cert, `expired at ${new Date(pair.notAfterMs).toISOString()}`);
  }
  return { ca, cert, key };
}

async function read(option: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw bad(option, path, `cannot be read (${why})`);
  }
}

/** The certificates of a PEM file, each parsed; at least one. */
function certificates(option: string, path: string, pem: string): readonly X509Certificate[] {
  const parsed = parsePemCertificates(pem);
  if (parsed.ok) return parsed.certificates;
  if (parsed.index === undefined) throw bad(option, path, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  throw bad(option, path, `certificate ${parsed.index} does not parse (${parsed.message})`);
}

function bad(option: string, path: string, why: string): ValidationError {
  return new ValidationError(`${option}: ${path} ${why}`, { field: option });
}
