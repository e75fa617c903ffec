import { z } from 'zod';
import { sanitizeDeep } from '../sanitize.js';

// The audit trail's entries as the dashboard reads them (docs/ARCHITECTURE.md §3.4): checked
// loosely, as the other events are. `action` and `outcome` are data, not enums (a later release
// adds actions, shown as they come); fields the dashboard does not know pass; every field but the
// id, the time, who and the action may be missing.
const AuditFilterShape = z.looseObject({
  kind: z.string().optional(),
  state: z.string().optional(),
  q: z.string().optional(),
});
const AuditEntryShape = z.looseObject({
  id: z.string().min(1),
  at_ms: z.number(),
  at: z.string().optional(),
  who: z.string().min(1),
  client: z.string().optional(),
  action: z.string().min(1),
  route: z.string().optional(),
  kind: z.string().optional(),
  target: z.string().optional(),
  task_id: z.string().optional(),
  filter: AuditFilterShape.optional(),
  reason: z.string().optional(),
  until_ms: z.number().nullable().optional(),
  outcome: z.string().optional(),
  count: z.number().optional(),
  matched: z.number().optional(),
  master_id: z.string().optional(),
});

/** One operator action that committed, as the master's audit trail keeps it. */
export type AuditEntry = z.infer<typeof AuditEntryShape>;

/** An `audit` event of `GET /api/v1/events`: an entry written (a bulk action's again with each store it commits). */
export interface AuditStreamEvent {
  readonly type: 'audit';
  readonly revision?: number | undefined;
  readonly entry: AuditEntry;
}

/**
 * The entries of one page of `GET /api/v1/audit` (`{entries: […]}`, newest first), each checked
 * as an event's is and sanitised; a malformed one is left out.
 */
export function parseAuditPage(body: unknown): AuditEntry[] {
  const list = (body as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(list)) return [];
  return list.flatMap((item) => {
    const parsed = AuditEntryShape.safeParse(item);
    return parsed.success ? [sanitizeDeep(parsed.data)] : [];
  });
}

/**
 * An `audit` event's data as the dashboard uses it, sanitised; undefined when malformed. The
 * entry is its `entry` (or `event`, the name a `timeline` event gives its payload).
 */
export function parseAuditEvent(json: unknown): AuditStreamEvent | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const { type, revision, entry, event } = json as Record<string, unknown>;
  if (type !== 'audit') return undefined;
  const parsed = AuditEntryShape.safeParse(entry ?? event);
  if (!parsed.success) return undefined;
  return {
    type: 'audit',
    revision: typeof revision === 'number' ? revision : undefined,
    entry: sanitizeDeep(parsed.data),
  };
}
