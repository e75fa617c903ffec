/**
 * What a failed TLS handshake with the master means for the operator, by the code Node's TLS
 * layer gives it: the message says what to pass (`--ca`, `--cert`/`--key`, another `--url`)
 * rather than an OpenSSL reason. Undefined for a code that is not about TLS.
 */
export function tlsProblem(
  cause: { readonly code?: string; readonly message?: string; readonly reason?: string } | undefined,
): string | undefined {
  // OpenSSL 3.2 and later (Node 22.?, 24) name an SSLv3-era alert `ssl/tls alert …`, where the
  // OpenSSL of Node 20 says `sslv3 alert …`: one alert, two codes.
  const code = cause?.code?.replace('ERR_SSL_SSL/TLS_ALERT_', 'ERR_SSL_SSLV3_ALERT_');
  if (code === undefined) return undefined;
  // OpenSSL's errors carry a short `reason` ("sslv3 alert handshake failure") beside a message
  // full of internals; Node's certificate checks have only the message ("self-signed certificate").
  const detail = cause?.reason ?? cause?.message;
  const why = detail ? ` (${detail})` : '';
  switch (code) {
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return `the master's TLS certificate is not trusted${why}: pass the CA that signed it with --ca=<file> (env MAINTD_CA)`;
    case 'CERT_HAS_EXPIRED':
      return `the master's TLS certificate has expired${why}`;
    case 'CERT_NOT_YET_VALID':
      return `the master's TLS certificate is not valid yet${why}: check this host's clock`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `the master's TLS certificate is not for the host of --url${why}: use a name it was issued for`;
    case 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED':
      return 'the master requires a client certificate: pass --cert=<file> and --key=<file> (env MAINTD_CERT, MAINTD_KEY)';
    case 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA':
    case 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE':
    case 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN':
    case 'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED':
    case 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE':
      return `the master refused the TLS handshake${why}: it requires a client certificate signed by its MASTER_TLS_CLIENT_CA (--cert, --key)`;
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
    case 'ERR_SSL_PACKET_LENGTH_TOO_LONG':
      return 'the master did not answer in TLS: is it serving plain http? (then --url http://…)';
    default:
      return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') ? `TLS handshake failed${why}` : undefined;
  }
}
