import type { OpenAPIHono } from '@hono/zod-openapi';
import type { CooldownPolicy, TaskKind } from '@maintd/core';
import { type WindowInput, policyRoute, policyView } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/**
 * `/api/v1/scheduler/policy`: the cooldown policy this master runs, fixed for its lifetime, and
 * its maintenance windows as they stand at the request.
 */
export function policyRoutes(
  policy: CooldownPolicy,
  masterId: string,
  runs: readonly TaskKind[],
  windows: () => readonly WindowInput[],
): OpenAPIHono<AppEnv> {
  return createRouter().openapi(policyRoute, (c) => c.json(policyView(policy, masterId, runs, windows()), 200));
}
