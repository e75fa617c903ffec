import type { TokenScope } from './api-token.js';

/**
 * A client certificate's subject mapped to a name and a scope by a `subject:` line of the tokens
 * file (docs/ARCHITECTURE.md §3.4): a request over a verified certificate with this subject acts
 * as `name`, with `scope`, as a token of that name would.
 */
export interface SubjectGrant {
  readonly name: string;
  readonly scope: TokenScope;
  /** The subject's canonical text (`canonicalSubject`). */
  readonly subject: string;
}

/** The grant of a verified certificate's canonical subject, or undefined. */
export function findSubjectGrant(grants: readonly SubjectGrant[], subject: string): SubjectGrant | undefined {
  return grants.find((g) => g.subject === subject);
}
