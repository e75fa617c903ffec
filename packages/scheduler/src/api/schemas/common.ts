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
