import type { AuditIntent } from '../audit.js';
import type { TaskKind } from '../model.js';

/**
 * Who acted, for an operator's action: the timeline's `by`, and the audit entry to write in the
 * action's transaction (docs/ARCHITECTURE.md §2.9), if any.
 */
export interface Actor {
  /** Who: `<token name>@<client address>`, or the client address; bounded and sanitised when stored. */
  readonly by: string;
  /** The request to record in the audit trail, in the transaction of what it commits. */
  readonly audit?: AuditIntent;
}

/** One (kind, target) of a bulk action. */
export interface Pair {
  /** The kind. */
  readonly kind: TaskKind;
  /** The store. */
  readonly target: string;
}
