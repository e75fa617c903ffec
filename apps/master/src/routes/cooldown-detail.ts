import type { OpenAPIHono } from '@hono/zod-openapi';
import { type Clock, type CooldownPolicy, type TaskKind, type TaskStore, appliesTo, timelineView } from '@maintd/core';
import { type WindowInput, cooldownDetailRoute, cooldownView, policyView, timelineEventView } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { createRouter } from '../http/router.js';

/** What the cooldown detail route needs. */
export interface CooldownDetailDeps {
  readonly store: TaskStore;
  readonly clock: Clock;
  /** The cooldown policy this master runs: the detail's `policy`, `applies` and the entry's `gating`. */
  readonly policy: CooldownPolicy;
  /** The kinds this master runs (a policy for `all` kinds lists them). */
  readonly runs: readonly TaskKind[];
  /** This master's maintenance windows as they stand now. */
  readonly windows: () => readonly WindowInput[];
}

/**
 * `GET /api/v1/scheduler/cooldowns/{kind}/{target}`: why one store is cooling, since when, and
 * who touched it, in one answer (docs/ARCHITECTURE.md §3.4). Read from the store each time
 * (three reads in parallel): a detail is asked for one pair at a time, and its timeline is in no
 * index.
 */
export function cooldownDetailRoutes(deps: CooldownDetailDeps): OpenAPIHono<AppEnv> {
  const { store, clock, policy, runs, windows } = deps;
  return createRouter().openapi(cooldownDetailRoute, async (c) => {
    const { kind, target } = c.req.valid('param');
    const { limit } = c.req.valid('query');
    const [cooldown, park, events] = await Promise.all([
      store.getCooldown(kind, target),
      store.getPark(kind, target),
      store.timelines.read(kind, target, limit),
    ]);
    if (!cooldown && !park && events.length === 0) {
      return c.json({ error: `no cooldown, park or timeline for ${kind} '${target}'` }, 404);
    }
    const now = clock.now();
    return c.json(
      {
        kind,
        target,
        entry: cooldownView(cooldown, park, now, policy),
        policy: policyView(policy, store.masterId, runs, windows()),
        applies: appliesTo(policy, kind),
        timeline: timelineView(events, now).map(timelineEventView),
      },
      200,
    );
  });
}
