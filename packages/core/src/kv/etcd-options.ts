import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { MaintdError } from '../errors.js';

/** Connection settings of {@link EtcdKv}. */
export interface EtcdKvOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379`. */
  readonly endpoints: readonly string[];
  /** Username/password authentication (set both or neither). */
  readonly auth?: { readonly username: string; readonly password: string };
  /** TLS: PEM contents of the CA, and optionally of a client certificate and key. */
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  /** Deadline of every unary call, in ms (default 5000). A hung etcd fails calls, never hangs them. */
  readonly callTimeoutMs?: number;
  /** How long a host's open circuit stays open before a trial call, in ms (default 500). */
  readonly halfOpenAfterMs?: number;
}

/** etcd connection settings as operators give them: endpoints, credentials, and PEM file paths. */
export interface EtcdConnectionSettings {
  /** Client URLs. */
  readonly endpoints: readonly string[];
  /** Username (with `password`; both or neither). */
  readonly username?: string | undefined;
  /** Password (with `username`). */
  readonly password?: string | undefined;
  /** Path of the CA certificate (PEM): enables TLS. */
  readonly caCert?: string | undefined;
  /** Path of the client certificate (PEM), with `clientKey`. */
  readonly clientCert?: string | undefined;
  /** Path of the client key (PEM). */
  readonly clientKey?: string | undefined;
}

/**
 * {@link EtcdKvOptions} from connection settings, reading the PEM files. A file that cannot be
 * read fails with a message naming its setting (`ETCD_CA_CERT`, `ETCD_CLIENT_CERT`,
 * `ETCD_CLIENT_KEY`) and the path.
 */
export async function etcdKvOptions(settings: EtcdConnectionSettings): Promise<EtcdKvOptions> {
  const read = async (path: string, setting: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (err) {
      throw new MaintdError(
        `${setting}: cannot read '${path}': ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        {
          cause: err,
        },
      );
    }
  };
  // gRPC silently falls back to the system CAs for a file that is not PEM: check each here.
  const parse = (buf: Buffer, path: string, setting: string, what: 'certificate' | 'key'): Buffer => {
    try {
      if (what === 'key') createPrivateKey(buf);
      else new X509Certificate(buf);
      return buf;
    } catch (err) {
      throw new MaintdError(`${setting}: '${path}' is not a PEM ${what}`, { cause: err });
    }
  };
  const file = async (path: string, setting: string, what: 'certificate' | 'key'): Promise<Buffer> =>
    parse(await read(path, setting), path, setting, what);
  // Given credentials, the etcd client speaks TLS to every endpoint, whatever its scheme says.
  const plain = settings.caCert ? settings.endpoints.find((e) => /^http:\/\//i.test(e)) : undefined;
  if (plain !== undefined) {
    throw new MaintdError(`ETCD_ENDPOINTS: '${plain}' is plain http://, but ETCD_CA_CERT is set: use https://`);
  }
  const tls = settings.caCert
    ? {
        ca: await file(settings.caCert, 'ETCD_CA_CERT', 'certificate'),
        ...(settings.clientCert ? { cert: await file(settings.clientCert, 'ETCD_CLIENT_CERT', 'certificate') } : {}),
        ...(settings.clientKey ? { key: await file(settings.clientKey, 'ETCD_CLIENT_KEY', 'key') } : {}),
      }
    : undefined;
  return {
    endpoints: settings.endpoints,
    ...(settings.username && settings.password
      ? { auth: { username: settings.username, password: settings.password } }
      : {}),
    ...(tls ? { tls } : {}),
  };
}
