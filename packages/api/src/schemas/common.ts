/**
 * The small schemas several resources of the API share: the task record as a component, ids,
 * counts, page sizes and cursors (docs/ARCHITECTURE.md §3.4).
 */
import { z } from '@hono/zod-openapi';
import { TaskRecordSchema } from '@maintd/core';

// Core's schemas are plain zod (core does not depend on the OpenAPI layer): their descriptions
// are zod's own `.describe()`, and `.meta({ id })` names them as components of the document.
/** A task record, as the `TaskRecord` component. */
export const Task = TaskRecordSchema.meta({ id: 'TaskRecord' });
/** A task id: a UUIDv7. */
export const TaskId = z.uuid({ version: 'v7' });
/** The page size of a paged list. */
export const Limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(200)
  .default(50)
  .describe('Page size (items): 1–200, default 50');
/** A boolean query parameter. */
export const Bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
/** A count. */
export const Count = z.number().int().nonnegative();
/** The cursor of the next page in a paged body. */
export const NextCursor = z
  .string()
  .nullable()
  .describe('Pass as `cursor` to read the next page (the `Link` header says the same); null on the last page');
/**
 * `at` and `until` as ISO 8601 text, beside a stored event's `at_ms` and `until_ms`: the fields a
 * timeline event's and an audit entry's views add.
 */
export const IsoTimes = {
  at: z.iso.datetime().describe('`at_ms` as an ISO 8601 UTC timestamp'),
  until: z.iso
    .datetime()
    .nullable()
    .optional()
    .describe('`until_ms` as an ISO 8601 UTC timestamp; null where `until_ms` is null, absent where it is'),
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** `e` with {@link IsoTimes}: `at` always, `until` where `e` has `until_ms` (null where that is). */
export function withIsoTimes<T extends { readonly at_ms: number; readonly until_ms?: number | null | undefined }>(
  e: T,
): T & { at: string; until?: string | null } {
  return {
    ...e,
    at: iso(e.at_ms),
    ...(e.until_ms !== undefined ? { until: e.until_ms === null ? null : iso(e.until_ms) } : {}),
  };
}
