/**
 * Failures grouped by cause, as `GET /api/v1/scheduler/causes` serves them (docs/ARCHITECTURE.md §2.7).
 */
import { z } from '@hono/zod-openapi';
import { TaskKindSchema } from '@maintd/core';
import { Count } from './common.js';

/** A failure cause: 12 lowercase hex digits. */
export const CauseId = z
  .string()
  .regex(/^[0-9a-f]{12}$/, 'must be 12 lowercase hex digits')
  .describe(
    "A failure's cause: a stable id of its error with the store's name, ids, numbers, hex, UUIDs and the variable parts of paths taken out",
  );

/** One cause and the stores failing with it. */
export const CauseSchema = z
  .object({
    cause: CauseId,
    example: z.string().describe('The last error of one of its stores, as stored'),
    kinds: z.array(TaskKindSchema).describe('The kinds failing with it, by name'),
    targets: Count.describe('How many stores fail with it (a count), below the threshold included'),
    failures: Count.describe('Their failures counted so far (a count)'),
    first_failure: z.iso.datetime().describe('The earliest first failure among them, as an ISO 8601 UTC timestamp'),
    last_failure: z.iso.datetime().describe('The latest failure among them, as an ISO 8601 UTC timestamp'),
  })
  .openapi('FailureCause', { description: 'A cause of failures and how far it reaches' });
/** One cause as the API serves it. */
export type CauseView = z.infer<typeof CauseSchema>;
