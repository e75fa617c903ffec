/**
 * The audit trail as the API serves it (docs/ARCHITECTURE.md §2.9, §3.4): each entry with its
 * times as ISO 8601 text beside the stored milliseconds, and a page of them.
 */
import { z } from '@hono/zod-openapi';
import { type AuditEntry, AuditEntrySchema } from '@maintd/core';
import { IsoTimes, NextCursor, withIsoTimes } from './common.js';

/** One audit entry as served: the stored entry with `at` (and `until`, where it has `until_ms`) as ISO 8601 text. */
export const AuditEntryViewSchema = AuditEntrySchema.extend(IsoTimes).meta({
  id: 'AuditEntry',
  description:
    'One operator action that committed: `who` (a token’s name, never the token), `client`, `at`, `action`, `route`, what it named (`kind`, `target`, `task_id`, or a bulk action’s `filter`), `outcome`, and for a bulk action `count` (exactly the stores it committed) and `matched`. A client shows an `action` or `outcome` it does not know as it is, and keeps fields it does not know',
});
/** An audit entry as the API serves it. */
export type AuditEntryView = z.infer<typeof AuditEntryViewSchema>;

/** `GET /api/v1/audit`: one page, newest first. */
export const AuditPageSchema = z
  .object({
    entries: z.array(AuditEntryViewSchema).describe('The page, newest first'),
    next_cursor: NextCursor,
  })
  .openapi('AuditPage', { description: 'One page of the audit trail' });
/** A page of the audit trail as the API serves it. */
export type AuditPageBody = z.infer<typeof AuditPageSchema>;

/** An entry as the API serves it: times as ISO 8601 text beside the stored milliseconds. */
export function auditEntryView(e: AuditEntry): AuditEntryView {
  return withIsoTimes(e);
}
