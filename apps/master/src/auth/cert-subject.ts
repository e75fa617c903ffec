/**
 * Client certificate subjects as the tokens file names them (docs/ARCHITECTURE.md §3.4): RFC 4514
 * text, most specific first, as `openssl x509 -noout -subject -nameopt RFC2253` prints it, e.g.
 * `CN=alice,OU=sre,O=Example\, Inc`. A configured subject and a verified peer certificate's
 * subject are each brought to one canonical text and compared whole: attribute types are
 * case-insensitive (OpenSSL's short names, `CN`, `emailAddress`, or dotted OIDs); values are
 * compared exactly after unescaping, with the spaces around `,`, `+` and `=` ignored; the
 * attributes of a multi-valued RDN (`CN=a+UID=1`) in any order.
 */

/** What {@link canonicalSubject} makes of a configured subject. */
export type ParsedSubject =
  { readonly ok: true; readonly subject: string } | { readonly ok: false; readonly error: string };

interface Ava {
  readonly type: string;
  readonly value: string;
}

const TYPE = /^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)+)$/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;

/** Parses RFC 4514 text into RDNs (each a list of attributes), or says what is wrong. */
function parse(text: string): Ava[][] | string {
  const rdns: Ava[][] = [];
  let rdn: Ava[] = [];
  let i = 0;
  for (;;) {
    const eq = text.indexOf('=', i);
    if (eq === -1) return `expected TYPE=value at character ${i + 1}`;
    const type = text.slice(i, eq).trim();
    if (!TYPE.test(type)) return `expected an attribute type (such as CN, O, OU) at character ${i + 1}`;
    i = eq + 1;
    while (text[i] === ' ') i++;
    if (text[i] === '#') return `the value of ${type} is hex-encoded (#…), which is not supported`;
    const bytes: number[] = [];
    /** Length of `bytes` up to the last character that is not an unescaped space. */
    let kept = 0;
    let end: string | undefined;
    for (; i < text.length; i++) {
      const ch = text[i] as string;
      if (ch === ',' || ch === '+') {
        end = ch;
        i++;
        break;
      }
      if (ch === '\\') {
        const pair = text.slice(i + 1, i + 3);
        if (HEX2.test(pair)) {
          bytes.push(parseInt(pair, 16));
          i += 2;
        } else if (i + 1 < text.length) {
          bytes.push(...Buffer.from(text[i + 1] as string, 'utf8'));
          i += 1;
        } else {
          return `the value of ${type} ends with a lone backslash`;
        }
        kept = bytes.length;
        continue;
      }
      const code = text.codePointAt(i) ?? 0;
      const char = String.fromCodePoint(code);
      bytes.push(...Buffer.from(char, 'utf8'));
      if (char.length === 2) i++;
      if (ch !== ' ') kept = bytes.length;
    }
    rdn.push({ type: type.toUpperCase(), value: Buffer.from(bytes.slice(0, kept)).toString('utf8') });
    if (end !== '+') {
      rdns.push(rdn);
      rdn = [];
    }
    if (end === undefined) return rdns;
    while (text[i] === ' ') i++;
  }
}

const SPECIAL = new Set(['\\', '"', '+', ',', ';', '<', '>']);

function escapeValue(value: string): string {
  let out = '';
  const chars = [...value];
  chars.forEach((ch, k) => {
    const edge = (k === 0 && (ch === ' ' || ch === '#')) || (k === chars.length - 1 && ch === ' ');
    out += SPECIAL.has(ch) || edge ? `\\${ch}` : ch;
  });
  return out;
}

function render(rdns: readonly Ava[][]): string {
  return rdns
    .map((rdn) =>
      rdn
        .map((a) => `${a.type}=${escapeValue(a.value)}`)
        .sort()
        .join('+'),
    )
    .join(',');
}

/** A configured subject's canonical text, or what is wrong with it (never quoting the subject). */
export function canonicalSubject(text: string): ParsedSubject {
  if (text.trim() === '') return { ok: false, error: 'the subject is empty' };
  const parsed = parse(text);
  return typeof parsed === 'string' ? { ok: false, error: parsed } : { ok: true, subject: render(parsed) };
}

/**
 * The canonical text of a certificate's subject as Node's `X509Certificate.subject` gives it:
 * one RDN a line, least specific first, values escaped as RFC 2253 says, the attributes of a
 * multi-valued RDN joined by ` + `. Undefined when it does not parse (no subject then maps).
 */
export function certificateSubject(nodeSubject: string): string | undefined {
  const lines = nodeSubject.split('\n').filter((l) => l !== '');
  if (lines.length === 0) return undefined;
  const parsed = parse(lines.reverse().join(','));
  return typeof parsed === 'string' ? undefined : render(parsed);
}
