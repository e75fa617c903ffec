/**
 * The OpenAPI document of the master's API (docs/ARCHITECTURE.md §3.4): every route in document
 * order, the document's header and the function that builds it from the route definitions.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { BEARER_AUTH } from './contract.js';
import { capacityRoute } from './routes/capacity.js';
import {
  causesRoute,
  cooldownDetailRoute,
  listCooldownsRoute,
  parkRoute,
  parkTargetsRoute,
  policyRoute,
  resetCooldownRoute,
  resetCooldownsRoute,
} from './routes/cooldowns.js';
import { patchClusterRoute } from './routes/cluster.js';
import { listAuditRoute } from './routes/audit.js';
import { eventsRoute } from './routes/events.js';
import { mastersRoute, storesRoute, workersRoute } from './routes/fleet.js';
import { healthRoute, metricsRoute, openApiRoute, readyRoute } from './routes/operations.js';
import { enqueueRoute, getTaskRoute, listTasksRoute } from './routes/tasks.js';

/** Every route of the API, in document order. */
export const ROUTES = [
  enqueueRoute,
  listTasksRoute,
  getTaskRoute,
  listCooldownsRoute,
  cooldownDetailRoute,
  parkRoute,
  resetCooldownRoute,
  parkTargetsRoute,
  resetCooldownsRoute,
  policyRoute,
  causesRoute,
  capacityRoute,
  storesRoute,
  mastersRoute,
  patchClusterRoute,
  workersRoute,
  listAuditRoute,
  eventsRoute,
  healthRoute,
  readyRoute,
  metricsRoute,
  openApiRoute,
] as const;

type DocumentConfig = Parameters<OpenAPIHono['getOpenAPI31Document']>[0];

/** The document's header: what `/api/v1/openapi.json` says about itself. */
export const OPENAPI_INFO: Readonly<DocumentConfig> = {
  openapi: '3.1.0',
  info: {
    title: 'maintd master API',
    version: '1',
    description:
      'The HTTP API of a maintd master (docs/ARCHITECTURE.md §3.4). Any master answers for the whole fleet: they share their state through etcd. Reads are open; mutations need the bearer token (`MASTER_API_TOKEN`) or, while none is set, a loopback client. Errors are `{"error": "…"}`. A mutation refuses a query parameter or body field it does not know (400 naming it); a read ignores an unknown query parameter. Every time is in milliseconds since the Unix epoch unless the field says otherwise.',
  },
  // Variables rather than a fixed URL: every master serves the same API wherever it runs.
  servers: [
    {
      url: 'http://{host}:{port}',
      description: 'A maintd master (any one: each answers for the whole fleet)',
      variables: {
        host: {
          default: 'localhost',
          description: 'Host of the master: MASTER_HOST, or any address it listens on',
        },
        port: { default: '8090', description: 'MASTER_PORT (default 8090)' },
      },
    },
  ],
  tags: [
    { name: 'tasks', description: 'Enqueue and read maintenance tasks' },
    {
      name: 'cooldowns',
      description: 'Failure cooldowns and parks: what the sweeps skip, the policy, operator resets, parks and releases',
    },
    { name: 'fleet', description: 'Stores, masters and workers' },
    { name: 'events', description: 'Live task and cooldown changes' },
    { name: 'operations', description: 'Health, readiness, metrics and this document' },
  ],
};

/**
 * The OpenAPI 3.1 document of the master's API, built from the route definitions alone: no
 * store, no app, no network. The daemon serves this same document.
 */
export function openApiDocument(): ReturnType<OpenAPIHono['getOpenAPI31Document']> {
  const app = new OpenAPIHono();
  app.openAPIRegistry.registerComponent('securitySchemes', BEARER_AUTH, {
    type: 'http',
    scheme: 'bearer',
    description:
      'A named token (MASTER_API_TOKENS_FILE, scope `read` or `operate`) or MASTER_API_TOKEN (the `operate` token `default`), sent as `Authorization: Bearer <token>`, never in the query string (400). Mutations need an `operate` token when any token is configured (401 without one, 403 for a `read` token); while none is, loopback clients may mutate without a token and other clients may not mutate at all (403). Reads need a `read` or `operate` token only when MASTER_API_READS=token.',
  });
  for (const route of ROUTES) app.openAPIRegistry.registerPath(route);
  return app.getOpenAPI31Document(structuredClone(OPENAPI_INFO));
}
