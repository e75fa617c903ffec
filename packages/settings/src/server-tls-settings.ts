/**
 * The TLS settings of a daemon's own HTTP endpoint (docs/ARCHITECTURE.md §3.1, §3.4): the
 * master's API (`MASTER_TLS_*`) and the exporter's `/metrics` (`EXPORTER_TLS_*`), declared once
 * so that the two cannot differ in their rules. Each is the path of a PEM file; the files are read
 * by `ServerTls` (`@maintd/settings/tls`), never printed.
 */
import type { z } from 'zod';
import { optional, text } from './settings.js';

/** Whose endpoint: the prefix of the settings' names. */
export type ServerTlsPrefix = 'MASTER' | 'EXPORTER';

/** The names of one endpoint's TLS settings. */
export type ServerTlsSettingName<P extends ServerTlsPrefix> = `${P}_TLS_CERT` | `${P}_TLS_KEY` | `${P}_TLS_CLIENT_CA`;

const pathSetting = (description: string) => optional(text('path'), { description });

/** The `<P>_TLS_*` settings of an endpoint (`what` names it in `--help`, e.g. `the HTTP API`). */
export function serverTlsSettings<P extends ServerTlsPrefix>(
  p: P,
  what: string,
): Record<ServerTlsSettingName<P>, ReturnType<typeof pathSetting>> {
  return {
    [`${p}_TLS_CERT`]: pathSetting(
      `PEM file of the certificate (chain) ${what} serves over HTTPS; needs ${p}_TLS_KEY; unset = plain HTTP. Re-read when it changes.`,
    ),
    [`${p}_TLS_KEY`]: pathSetting(
      `PEM file of the private key of ${p}_TLS_CERT (unencrypted); re-read when it changes.`,
    ),
    [`${p}_TLS_CLIENT_CA`]: pathSetting(
      `PEM file of the CA(s) that sign client certificates; set = every client must present one (mutual TLS). Needs ${p}_TLS_CERT.`,
    ),
  } as Record<ServerTlsSettingName<P>, ReturnType<typeof pathSetting>>;
}

/** An endpoint's TLS files, as `ServerTls` reads them: set together, or TLS is off. */
export interface ServerTlsConfig {
  /** Whose settings these are, so that every message names the one at fault. */
  readonly prefix: ServerTlsPrefix;
  /** `<P>_TLS_CERT`: the certificate, leaf first, then any intermediates. */
  readonly cert: string;
  /** `<P>_TLS_KEY`. */
  readonly key: string;
  /** `<P>_TLS_CLIENT_CA`: set = client certificates signed by it are required. */
  readonly clientCa: string | undefined;
}

type Values<P extends ServerTlsPrefix> = Partial<Record<ServerTlsSettingName<P>, string | undefined>>;

/**
 * The rules across an endpoint's TLS settings, for a schema's `superRefine`: the certificate and
 * the key come together, and a client CA needs them (mutual TLS over plain HTTP is nothing). Each
 * broken rule is an issue on the setting that is missing.
 */
export function checkServerTlsSettings<P extends ServerTlsPrefix>(p: P, s: Values<P>, ctx: z.RefinementCtx): void {
  const cert = `${p}_TLS_CERT` as ServerTlsSettingName<P>;
  const key = `${p}_TLS_KEY` as ServerTlsSettingName<P>;
  const ca = `${p}_TLS_CLIENT_CA` as ServerTlsSettingName<P>;
  const required = (path: string, message: string): void => {
    ctx.addIssue({ code: 'custom', path: [path], message, params: { got: null } });
  };
  if ((s[cert] === undefined) !== (s[key] === undefined)) {
    const [set, unset] = s[cert] === undefined ? [key, cert] : [cert, key];
    required(unset, `required because ${set} is set (set both or neither)`);
  }
  if (s[ca] !== undefined && s[cert] === undefined && s[key] === undefined) {
    required(cert, `required because ${ca} is set (client certificates need TLS: set ${cert} and ${key})`);
  }
}

/** An endpoint's TLS settings as its config's `tls`: undefined = plain HTTP. */
export function serverTlsConfig<P extends ServerTlsPrefix>(p: P, s: Values<P>): ServerTlsConfig | undefined {
  const cert = s[`${p}_TLS_CERT` as ServerTlsSettingName<P>];
  const key = s[`${p}_TLS_KEY` as ServerTlsSettingName<P>];
  if (cert === undefined || key === undefined) return undefined;
  return { prefix: p, cert, key, clientCa: s[`${p}_TLS_CLIENT_CA` as ServerTlsSettingName<P>] };
}
