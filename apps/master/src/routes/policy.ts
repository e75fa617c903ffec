import type { OpenAPIHono } from '@hono/zod-openapi';
import type { CooldownPolicy, TaskKind } from '@maintd/core';
import { policyRoute, policyView } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/** `/api/v1/scheduler/policy`: the cooldown policy this master runs, fixed for its lifetime. */
export function policyRoutes(policy: CooldownPolicy, masterId: string, runs: readonly TaskKind[]): OpenAPIHono<AppEnv> {
  const view = policyView(policy, masterId, runs);
  return createRouter().openapi(policyRoute, (c) => c.json(view, 200));
}
