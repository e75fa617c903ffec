import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { selfSigned } from '../../test/certificates.js';
import { canonicalSubject, certificateSubject } from './cert-subject.js';

const canonical = (text: string): string => {
  const r = canonicalSubject(text);
  if (!r.ok) throw new Error(r.error);
  return r.subject;
};

describe('canonicalSubject', () => {
  it('keeps RFC 4514 text most specific first, with attribute types in upper case', () => {
    expect(canonical('CN=alice,O=ops')).toBe('CN=alice,O=ops');
    expect(canonical('cn=alice , o = ops')).toBe('CN=alice,O=ops');
    expect(canonical('emailAddress=a@b.example,CN=Alice Smith')).toBe('EMAILADDRESS=a@b.example,CN=Alice Smith');
    expect(canonical('2.5.4.3=alice')).toBe('2.5.4.3=alice');
  });

  it('unescapes values and writes them escaped one way, so equal subjects compare equal', () => {
    expect(canonical('O=Example\\, Inc,CN=a\\+b')).toBe(canonical('O=Example\\2C Inc,CN=a\\2Bb'));
    expect(canonical('CN=caf\\C3\\A9')).toBe('CN=café');
    expect(canonical('CN=\\ padded\\ ')).toBe('CN=\\ padded\\ ');
    expect(canonical('CN=a\\#b,O=\\#1')).toBe('CN=a#b,O=\\#1');
  });

  it('orders the attributes of a multi-valued RDN', () => {
    expect(canonical('UID=42+CN=alice,O=ops')).toBe(canonical('CN=alice + UID=42,O=ops'));
  });

  it('says what is wrong with a malformed subject', () => {
    expect(canonicalSubject('')).toEqual({ ok: false, error: 'the subject is empty' });
    expect(canonicalSubject('alice')).toEqual({ ok: false, error: 'expected TYPE=value at character 1' });
    expect(canonicalSubject('CN=alice,')).toEqual({ ok: false, error: 'expected TYPE=value at character 10' });
    expect(canonicalSubject('CN=x,O N=y')).toEqual({
      ok: false,
      error: 'expected an attribute type (such as CN, O, OU) at character 6',
    });
    expect(canonicalSubject('CN=#04024869')).toEqual({
      ok: false,
      error: 'the value of CN is hex-encoded (#…), which is not supported',
    });
    expect(canonicalSubject('CN=x\\')).toEqual({ ok: false, error: 'the value of CN ends with a lone backslash' });
  });
});

describe('certificateSubject', () => {
  it('renders a certificate’s subject as openssl -nameopt RFC2253 prints it, after canonicalSubject', async () => {
    for (const [subject, extra] of [
      ['/CN=alice/O=ops', []],
      ['/C=US/O=Ops, Inc/OU=x+y/CN=Alice Smith/emailAddress=a@b.example', []],
      ['/O=ops/CN=Alice+UID=42', ['-multivalue-rdn']],
      ['/CN=  spaced ', []],
    ] as const) {
      const cert = await selfSigned(subject, extra);
      const rendered = certificateSubject(new X509Certificate(cert.pem).subject);
      expect(rendered, subject).toBe(canonical(cert.rfc2253));
    }
  });

  it('renders no subject for an empty one', () => {
    expect(certificateSubject('')).toBeUndefined();
  });
});
