/** The audit route of the master's API (docs/ARCHITECTURE.md §2.9, §3.4). */
import { createRoute, z } from '@hono/zod-openapi';
import { AUDIT_ACTION_PATTERN, TargetSchema, TaskKindSchema } from '@maintd/core';
import { OPEN, PAGING_RULE, errors, json, pageHeaders } from '../contract.js';
import { AuditPageSchema } from '../schemas/audit.js';
import { Limit } from '../schemas/common.js';

export const listAuditRoute = createRoute({
  method: 'get',
  path: '/api/v1/audit',
  operationId: 'listAudit',
  // Under `fleet`: a new tag would change the released document's tag list.
  tags: ['fleet'],
  summary: 'Read the audit trail, newest first',
  description: `Every operator action that committed — a manual enqueue, a park, a reset, a release, a bulk park or reset, a cluster change — one entry each, written in the very transaction of the mutation (an action that committed nothing has none), newest first, filtered by \`who\`, \`action\`, \`kind\` and \`target\` (all must match). A bulk action is one entry whose \`count\` is exactly the stores it committed. Read from the store; bounded by AUDIT_LIMIT and AUDIT_TTL_SECS. Actions taken through a master older than this route are not recorded. ${PAGING_RULE}`,
  security: OPEN,
  request: {
    query: z.object({
      who: z.string().min(1).max(512).optional().describe("Only this token's name (or `anonymous`)"),
      action: z.string().regex(AUDIT_ACTION_PATTERN).optional().describe('Only this action, e.g. `cooldowns.reset`'),
      kind: TaskKindSchema.optional().describe('Only actions that named this kind (a bulk action: its filter’s kind)'),
      target: TargetSchema.optional().describe('Only actions that named this store'),
      limit: Limit,
      cursor: z
        .uuid({ version: 'v7' })
        .optional()
        .describe('`next_cursor` of the previous page: only entries older than this one'),
    }),
  },
  responses: {
    200: json(AuditPageSchema, 'A page of the audit trail', pageHeaders),
    ...errors,
  },
});
