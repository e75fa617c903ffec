/**
 * The operations routes of the master's API (docs/ARCHITECTURE.md §3.4, §3.5): liveness,
 * readiness, metrics and the OpenAPI document itself.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { OPEN, json } from '../contract.js';

export const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'getHealth',
  tags: ['operations'],
  summary: 'Liveness',
  description:
    'Answers 200 while the process serves HTTP, from the moment it starts (also while it waits for etcd); it reads nothing. Use it as a liveness probe.',
  security: OPEN,
  responses: {
    200: json(
      z
        .object({
          status: z
            .enum(['ok', 'starting'])
            .describe('`ok` once serving; `starting` while the master waits for etcd at startup'),
        })
        .openapi('Health', { description: 'The process is alive' }),
      'Alive',
    ),
  },
});

const ReadinessSchema = z
  .object({
    ready: z.boolean().describe('True when the store answers and the session is held'),
    store: z.enum(['ok', 'unavailable']).describe('Whether etcd answered a read within 2 seconds'),
    session: z
      .enum(['held', 'lost', 'none'])
      .describe('Whether this master holds its session lease (needed to claim tasks); `none` before its first one'),
    starting: z
      .boolean()
      .optional()
      .describe('Present and true while the master waits for etcd at startup (it serves nothing else yet)'),
  })
  .openapi('Readiness', { description: 'Readiness and its two conditions' });
export const readyRoute = createRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'getReadiness',
  tags: ['operations'],
  summary: 'Readiness',
  description:
    'Ready when the store (etcd) answers a read within 2 seconds and this master holds its session lease. Use it for load balancers.',
  security: OPEN,
  responses: {
    200: json(ReadinessSchema, 'Ready'),
    503: json(ReadinessSchema, 'Not ready: the body says which condition fails'),
  },
});

export const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  operationId: 'getMetrics',
  tags: ['operations'],
  summary: 'Prometheus metrics',
  description:
    "This process's metrics in the Prometheus text exposition format (version 0.0.4): `master_*` task, worker, cooldown and sweep metrics, `http_*` request metrics and Node's process metrics. No per-store labels.",
  security: OPEN,
  responses: {
    200: {
      description: 'The metrics',
      content: {
        'text/plain': {
          schema: z.string().describe('Prometheus text exposition format 0.0.4 (`text/plain; version=0.0.4`)'),
        },
      },
    },
  },
});

export const openApiRoute = createRoute({
  method: 'get',
  path: '/api/v1/openapi.json',
  operationId: 'getOpenApiDocument',
  tags: ['operations'],
  summary: 'This document',
  description: 'The OpenAPI 3.1 document of every route the master serves.',
  security: OPEN,
  responses: {
    200: json(
      z.record(z.string(), z.unknown()).describe('An OpenAPI 3.1 document').openapi('OpenApiDocument'),
      'The OpenAPI document',
    ),
  },
});
