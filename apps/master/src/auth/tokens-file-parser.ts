import { type ApiToken, type TokenScope } from './api-token.js';
import { canonicalSubject } from './cert-subject.js';
import type { SubjectGrant } from './subject-grant.js';

/** What {@link parseTokensFile} makes of a tokens file's text. */
export type ParsedTokensFile =
  | { readonly ok: true; readonly tokens: readonly ApiToken[]; readonly subjects: readonly SubjectGrant[] }
  /** `error` names the line and what is wrong with it, never what the line holds beyond its name. */
  | { readonly ok: false; readonly error: string };

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const SCOPES: readonly TokenScope[] = ['read', 'operate'];
const SHA256 = /^sha256:([0-9a-fA-F]{64})$/;

/**
 * Parses a `MASTER_API_TOKENS_FILE` (docs/ARCHITECTURE.md §3.4): one `<name> <scope> sha256:<hex>`
 * or `<name> <scope> subject:<certificate subject>` a line (the subject, RFC 4514 text, is the
 * rest of the line and may hold spaces), `read` or `operate`, `#` to the end of a line a comment,
 * blank lines ignored, names and subjects unique. Other credential forms are refused.
 */
export function parseTokensFile(text: string): ParsedTokensFile {
  const tokens: ApiToken[] = [];
  const subjects: SubjectGrant[] = [];
  const seen = new Map<string, number>();
  const seenSubjects = new Map<string, { line: number; name: string }>();
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const n = i + 1;
    const hash = raw.indexOf('#');
    const line = (hash === -1 ? raw : raw.slice(0, hash)).trim();
    if (line === '') continue;
    const fail = (what: string): ParsedTokensFile => ({ ok: false, error: `line ${n}: ${what}` });
    const fields = line.split(/\s+/);
    // A subject is the rest of the line: it may hold spaces (`CN=Alice Smith,O=ops`).
    if (fields.length > 3 && fields[2]?.startsWith('subject:')) fields.splice(3);
    if (fields.length !== 3) {
      return fail(`expected "<name> <read|operate> sha256:<64 hex digits>", got ${fields.length} fields`);
    }
    const [name = '', scope = '', credential = ''] = fields;
    if (!NAME.test(name)) return fail('the name must be 1 to 64 of A-Z a-z 0-9 _ . -');
    const first = seen.get(name);
    if (first !== undefined) return fail(`the name "${name}" is already used on line ${first}`);
    if (!SCOPES.includes(scope as TokenScope)) return fail(`the scope of "${name}" must be read or operate`);
    const colon = credential.indexOf(':');
    const form = colon === -1 ? '' : credential.slice(0, colon);
    if (form === 'subject') {
      // The subject is never quoted back: an error names the line and the name only.
      const subject = canonicalSubject(line.slice(line.indexOf('subject:') + 'subject:'.length));
      if (!subject.ok) return fail(`the subject of "${name}" is malformed: ${subject.error}`);
      const mapped = seenSubjects.get(subject.subject);
      if (mapped !== undefined) {
        return fail(`the subject of "${name}" is already mapped to "${mapped.name}" on line ${mapped.line}`);
      }
      seen.set(name, n);
      seenSubjects.set(subject.subject, { line: n, name });
      subjects.push({ name, scope: scope as TokenScope, subject: subject.subject });
      continue;
    }
    if (form !== 'sha256') {
      return fail(
        form === ''
          ? `the credential of "${name}" must be sha256:<64 hex digits> (the token's digest, never the token)`
          : `the credential form "${form}:" of "${name}" is not supported (only sha256:<64 hex digits> or subject:<certificate subject>)`,
      );
    }
    const hex = SHA256.exec(credential)?.[1];
    if (hex === undefined) return fail(`the digest of "${name}" must be sha256: and 64 hex digits`);
    seen.set(name, n);
    tokens.push({ name, scope: scope as TokenScope, digest: Buffer.from(hex, 'hex') });
  }
  return { ok: true, tokens, subjects };
}
