/** The fleet routes of the master's API (docs/ARCHITECTURE.md §3.4): stores, masters, workers. */
import { createRoute, z } from '@hono/zod-openapi';
import { MasterInfoSchema, StoreStatsSchema, TargetSchema } from '@maintd/core';
import { LIST_RULE, OPEN, PAGING_RULE, errors, json, pageHeaders } from '../contract.js';
import { Count, Limit, NextCursor } from '../schemas/common.js';
import { ClusterSchema } from '../schemas/cluster.js';
import { CooldownSchema } from '../schemas/cooldown.js';

const StoreRow = z
  .object({
    ...StoreStatsSchema.shape,
    cooldowns: z
      .array(CooldownSchema)
      .describe(
        "This store's cooldown entries of every kind: failure records (below the threshold and lapsed included) and parks in force; empty when none",
      ),
  })
  .openapi('Store', { description: "A store's stats row with its cooldown state" });
const Master = MasterInfoSchema.meta({ id: 'MasterInfo' });

export const storesRoute = createRoute({
  method: 'get',
  path: '/api/v1/stores',
  operationId: 'listStores',
  tags: ['fleet'],
  summary: 'List stores with their cooldown state',
  description: `One page of the stats rows the latest scans wrote, by name, each with its cooldown entries of every kind (as in the cooldown list: \`until\`, \`state\`, and the park when one is in force). ${PAGING_RULE} ${LIST_RULE}`,
  security: OPEN,
  request: {
    query: z.object({
      search: z
        .string()
        .max(255)
        .regex(/^[A-Za-z0-9._-]*$/, 'may contain only A-Z a-z 0-9 . _ -')
        .optional()
        .describe('Only stores whose name contains this text, ignoring case'),
      limit: Limit,
      cursor: TargetSchema.optional().describe('`next_cursor` of the previous page: only stores named after it'),
    }),
  },
  responses: {
    200: json(
      z
        .object({
          stores: z.array(StoreRow).describe('The page, by name'),
          total: Count.describe('How many stores match the search, over all pages (a count)'),
          next_cursor: NextCursor,
        })
        .openapi('StorePage', { description: 'One page of stores' }),
      'A page of stores',
      pageHeaders,
    ),
    ...errors,
  },
});

export const mastersRoute = createRoute({
  method: 'get',
  path: '/api/v1/masters',
  operationId: 'listMasters',
  tags: ['fleet'],
  summary: 'List live masters',
  description: `Every master whose session lease is alive, from its registration in the store, and the cluster's feature gates derived from those registrations (docs/ARCHITECTURE.md §2.8). ${LIST_RULE}`,
  security: OPEN,
  responses: {
    200: json(
      z
        .object({
          masters: z.array(Master).describe('Live masters'),
          cluster: ClusterSchema,
          window_disagreements: z
            .array(
              z.object({
                id: z.string().describe('The master'),
                windows: z
                  .array(z.string())
                  .describe('Its maintenance windows, `<kind>=<ranges>@<zone>`; empty when it keeps none'),
              }),
            )
            .optional()
            .describe(
              "The live masters whose maintenance windows differ from those of the master that answered: a master without a kind's window claims the automatic work the others hold back. Absent when all agree",
            ),
        })
        .openapi('MasterList', { description: 'The live masters' }),
      'Masters',
    ),
    ...errors,
  },
});

export const workersRoute = createRoute({
  method: 'get',
  path: '/api/v1/workers',
  operationId: 'listWorkers',
  tags: ['fleet'],
  summary: 'List worker endpoints',
  description: `The configured worker endpoints (\`WORKER_ENDPOINTS\` of the master asked) with the result of the latest stats scan of each, from the store: a scan runs on one master per interval fleet-wide, and every master answers with its result. ${LIST_RULE}`,
  security: OPEN,
  responses: {
    200: json(
      z
        .object({
          workers: z
            .array(
              z
                .object({
                  endpoint: z.string().describe('Base URL of the worker'),
                  ok: z
                    .boolean()
                    .nullable()
                    .describe('Whether the worker answered the latest scan; null before its first scan'),
                  error: z
                    .string()
                    .nullable()
                    .describe('Why the latest scan of this worker failed; null when it answered'),
                  last_scan_at: z
                    .number()
                    .nullable()
                    .describe(
                      'When the latest scan asked the worker, in milliseconds since the Unix epoch; null before its first scan',
                    ),
                  stores: Count.describe('Stores the worker reported in its latest successful scan (a count)'),
                })
                .openapi('Worker', { description: 'A worker endpoint with its latest scan result' }),
            )
            .describe('Every configured worker endpoint'),
        })
        .openapi('WorkerList', { description: 'The worker endpoints' }),
      'Workers',
    ),
    ...errors,
  },
});
