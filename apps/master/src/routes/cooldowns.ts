import type { OpenAPIHono } from '@hono/zod-openapi';
import {
  type Clock,
  type ParkRecord,
  type TaskCooldown,
  type TaskKind,
  type TaskStore,
  ValidationError,
} from '@maintd/core';
import type { Metrics } from '@maintd/scheduler';
import {
  cooldownView,
  listCooldownsRoute,
  parkRoute,
  resetCooldownRoute,
  resetCooldownsRoute,
} from '@maintd/scheduler/api';
import type { Logger } from 'pino';
import { CooldownIndex, LOCAL_REVISION } from '../cooldown-index.js';
import type { EventHub } from '../events.js';
import { type AppEnv, operatorOf } from '../http/context.js';
import { sendJson } from '../http/json-bytes.js';
import { nextLinks } from '../http/next-link.js';
import { createRouter } from '../http/router.js';
import type { StoreProbe } from '../store-probe.js';

/** What the cooldown and park routes need. */
export interface CooldownRoutesDeps {
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly events: EventHub | undefined;
  readonly probe: StoreProbe;
  /** The kinds this master runs (its registry's). */
  readonly runs: readonly TaskKind[];
}

/**
 * `/api/v1/scheduler/cooldowns` and the parks: the lists (paged and whole), parking a target,
 * and resetting cooldowns. Every list is served from a {@link CooldownIndex}: the event hub's,
 * kept current by its watches, once the probe vouches that etcd answers; without a live hub, one
 * built from a read of both prefixes.
 */
export function cooldownRoutes(deps: CooldownRoutesDeps): OpenAPIHono<AppEnv> {
  const { store, clock, logger, metrics, events: hub, probe, runs } = deps;
  const withNextLink = nextLinks();

  const index = async (kind: TaskKind | undefined): Promise<CooldownIndex> => {
    if (hub?.live) {
      await probe.vouch();
      return hub.cooldowns;
    }
    const filter = kind ? { kind } : {};
    const [cooldowns, parks] = await Promise.all([
      store.listCooldowns({ ...filter, all: true }),
      store.listParks(filter),
    ]);
    return CooldownIndex.from(cooldowns, parks, store.policy);
  };

  return createRouter()
    .openapi(listCooldownsRoute, async (c) => {
      const q = c.req.valid('query');
      if (q.limit === undefined) {
        // Without `limit` the answer is the whole list, as before paging existed: paging options
        // would be silently ignored, so they are refused instead.
        for (const [field, value] of [
          ['cursor', q.cursor],
          ['state', q.state],
          ['sort', q.sort],
        ] as const) {
          if (value !== undefined) throw new ValidationError(`invalid ${field}: needs limit (a paged list)`, { field });
        }
        return sendJson(c, (await index(q.kind)).listBody(q.kind, q.all ?? false, clock.now()), 200);
      }
      if (q.all !== undefined) {
        throw new ValidationError('invalid all: a paged list filters with state instead', { field: 'all' });
      }
      const page = (await index(q.kind)).page(
        { limit: q.limit, cursor: q.cursor, kind: q.kind, state: q.state, sort: q.sort },
        clock.now(),
      );
      return sendJson(
        c,
        page.body,
        200,
        withNextLink(c.req.url, page.nextCursor, { 'x-total-count': String(page.total) }),
      );
    })
    .openapi(parkRoute, async (c) => {
      const { kind, target } = c.req.valid('param');
      const body = c.req.valid('json');
      const now = clock.now();
      let untilMs: number | null = null;
      if (body.until !== undefined) {
        untilMs = Date.parse(body.until);
        if (!(untilMs > now)) {
          throw new ValidationError(`invalid until: must be in the future (now is ${new Date(now).toISOString()})`, {
            field: 'until',
          });
        }
      }
      const by = operatorOf(c);
      const park: ParkRecord = await store.park(kind, target, { reason: body.reason, by, untilMs });
      const cooldown: TaskCooldown | undefined = await store.getCooldown(kind, target);
      // This master's next read shows the park even before its watch reports it.
      hub?.cooldowns.applyPark(kind, target, park, LOCAL_REVISION);
      logger.info({ kind, target, reason: park.reason, by, until_ms: park.until_ms }, 'target parked by operator');
      return c.json(cooldownView(cooldown, park, now, store.policy)!, 200);
    })
    .openapi(resetCooldownRoute, async (c) => {
      const { kind, target } = c.req.valid('param');
      const [cleared, released] = await Promise.all([store.clearCooldown(kind, target), store.unpark(kind, target)]);
      if (!cleared && !released) {
        return c.json({ error: `no cooldown or park for ${kind} '${target}'` }, 404);
      }
      if (cleared) {
        hub?.cooldowns.applyCooldown(kind, target, undefined, LOCAL_REVISION);
        metrics.cooldownCleared.inc({ kind, reason: 'operator' });
        logger.info({ kind, target }, 'cooldown reset by operator');
      }
      if (released) {
        hub?.cooldowns.applyPark(kind, target, undefined, LOCAL_REVISION);
        logger.info({ kind, target }, 'target released by operator');
      }
      return c.json({ deleted: Number(cleared) + Number(released) }, 200);
    })
    .openapi(resetCooldownsRoute, async (c) => {
      const { kind } = c.req.valid('query');
      // Kind by kind, even for all of them: master_cooldown_cleared_total counts per kind. All of
      // them are the kinds this master runs and those of the records there are, whoever runs them.
      const kinds = kind
        ? [kind]
        : new Set([...runs, ...(await store.listCooldowns({ all: true })).map((r) => r.kind)]);
      let deleted = 0;
      for (const k of kinds) {
        const n = await store.clearCooldowns(k);
        if (n > 0) metrics.cooldownCleared.inc({ kind: k, reason: 'operator' }, n);
        deleted += n;
      }
      hub?.cooldowns.clearCooldowns(kind);
      if (deleted > 0) logger.info({ kind: kind ?? 'all', deleted }, 'cooldowns reset by operator');
      return c.json({ deleted }, 200);
    });
}
