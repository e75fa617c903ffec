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
  BULK_SAMPLE_MAX,
  type BulkResult,
  cooldownView,
  listCooldownsRoute,
  parkRoute,
  parkTargetsRoute,
  resetCooldownRoute,
  resetCooldownsRoute,
} from '@maintd/api';
import type { Logger } from 'pino';
import { CooldownIndex } from '../cooldown-index.js';
import type { CooldownSelection, SelectedEntry } from '../cooldown-query.js';
import type { EventHub } from '../events.js';
import { auditIntent } from '../http/audit-intent.js';
import { type AppEnv, operatorOf } from '../http/context.js';
import { sendJson } from '../http/json-bytes.js';
import { nextLinks } from '../http/next-link.js';
import { createRouter } from '../http/router.js';
import type { StoreProbe } from '../store-probe.js';

/** A park's end from its request: absent is until released; one not in the future is refused. */
function parkUntil(until: string | undefined, now: number): number | null {
  if (until === undefined) return null;
  const untilMs = Date.parse(until);
  if (!(untilMs > now)) {
    throw new ValidationError(`invalid until: must be in the future (now is ${new Date(now).toISOString()})`, {
      field: 'until',
    });
  }
  return untilMs;
}

/** What a bulk action answers besides its count done: the matches and the first of them, before. */
function bulkResult(matches: readonly SelectedEntry[], dryRun: boolean, done: number): BulkResult {
  return {
    dry_run: dryRun,
    count: matches.length,
    done,
    entries: matches.slice(0, BULK_SAMPLE_MAX).map((m) => m.view),
  };
}

/** What the cooldown and park routes need. */
export interface CooldownRoutesDeps {
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly events: EventHub | undefined;
  readonly probe: StoreProbe;
}

/**
 * `/api/v1/scheduler/cooldowns` and the parks: the lists (paged and whole), parking a target,
 * and resetting cooldowns. Every list is served from a {@link CooldownIndex}: the event hub's,
 * kept current by its watches, once the probe vouches that etcd answers; without a live hub, one
 * built from a read of both prefixes.
 */
export function cooldownRoutes(deps: CooldownRoutesDeps): OpenAPIHono<AppEnv> {
  const { store, clock, logger, metrics, events: hub, probe } = deps;
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

  /** The entries a bulk action's filter selects now, and the log line's fields for it. */
  const select = async (
    filter: CooldownSelection,
  ): Promise<{ matches: SelectedEntry[]; logged: Record<string, unknown> }> => {
    const matches = (await index(filter.kind)).select(filter, clock.now());
    const logged = {
      kind: filter.kind ?? 'all',
      state: filter.state ?? 'any',
      q: filter.q,
      cause: filter.cause,
      count: matches.length,
    };
    return { matches, logged };
  };
  /** A bulk action's filter as its audit entry keeps it: the parameters given, no others. */
  const auditFilter = (filter: CooldownSelection): { kind?: string; state?: string; q?: string; cause?: string } => ({
    ...(filter.kind !== undefined ? { kind: filter.kind } : {}),
    ...(filter.state !== undefined ? { state: filter.state } : {}),
    ...(filter.q !== undefined ? { q: filter.q } : {}),
    ...(filter.cause !== undefined ? { cause: filter.cause } : {}),
  });

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
        return sendJson(c, (await index(q.kind)).listBody(q.kind, q.all ?? false, clock.now(), q.q, q.cause), 200);
      }
      if (q.all !== undefined) {
        throw new ValidationError('invalid all: a paged list filters with state instead', { field: 'all' });
      }
      const page = (await index(q.kind)).page(
        { limit: q.limit, cursor: q.cursor, kind: q.kind, state: q.state, sort: q.sort, q: q.q, cause: q.cause },
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
      const untilMs = parkUntil(body.until, now);
      const by = operatorOf(c);
      const audit = auditIntent(c, parkRoute, 'cooldown.park', logger);
      const park: ParkRecord = await store.park(kind, target, { reason: body.reason, by, untilMs, audit });
      const cooldown: TaskCooldown | undefined = await store.getCooldown(kind, target);
      // This master's next read shows the park even before its watch reports it.
      hub?.cooldowns.wrotePark(kind, target, park);
      logger.info({ kind, target, reason: park.reason, by, until_ms: park.until_ms }, 'target parked by operator');
      return c.json(cooldownView(cooldown, park, now, store.policy)!, 200);
    })
    .openapi(resetCooldownRoute, async (c) => {
      const { kind, target } = c.req.valid('param');
      const by = operatorOf(c);
      // Two transactions, each with the audit entry of what it committed.
      const [cleared, released] = await Promise.all([
        store.clearCooldown(kind, target, { by, audit: auditIntent(c, resetCooldownRoute, 'cooldown.reset', logger) }),
        store.unpark(kind, target, { by, audit: auditIntent(c, resetCooldownRoute, 'cooldown.release', logger) }),
      ]);
      if (!cleared && !released) {
        return c.json({ error: `no cooldown or park for ${kind} '${target}'` }, 404);
      }
      if (cleared) {
        hub?.cooldowns.wroteCooldown(kind, target, undefined);
        metrics.cooldownCleared.inc({ kind, reason: 'operator' });
        logger.info({ kind, target, by }, 'cooldown reset by operator');
      }
      if (released) {
        hub?.cooldowns.wrotePark(kind, target, undefined);
        logger.info({ kind, target, by }, 'target released by operator');
      }
      return c.json({ deleted: Number(cleared) + Number(released) }, 200);
    })
    .openapi(parkTargetsRoute, async (c) => {
      const { dry_run: dryRun = false, ...filter } = c.req.valid('query');
      const body = c.req.valid('json');
      const untilMs = parkUntil(body.until, clock.now());
      const { matches, logged } = await select(filter);
      if (dryRun) return c.json(bulkResult(matches, true, 0), 200);
      const by = operatorOf(c);
      const audit = auditIntent(c, parkTargetsRoute, 'cooldowns.park', logger, {
        filter: auditFilter(filter),
        matched: matches.length,
      });
      // Each park with its own timeline event, as a single park; the action one audit entry.
      const parked = await store.bulk.park(
        matches.map(({ view }) => ({ kind: view.kind, target: view.target })),
        { reason: body.reason, by, untilMs, audit },
        // This master's next read shows the park even before its watch reports it.
        (park) => hub?.cooldowns.wrotePark(park.kind, park.target, park),
      );
      const done = parked.length;
      logger.info({ ...logged, done, reason: body.reason, by, until_ms: untilMs }, 'targets parked by operator');
      return c.json(bulkResult(matches, false, done), 200);
    })
    .openapi(resetCooldownsRoute, async (c) => {
      const { dry_run: dryRun = false, ...filter } = c.req.valid('query');
      const selected = await select(filter);
      // A park alone has no record to reset: it does not match a reset.
      const matches = selected.matches.filter((m) => m.hasRecord);
      const logged = { ...selected.logged, count: matches.length };
      if (dryRun) return c.json({ ...bulkResult(matches, true, 0), deleted: 0 }, 200);
      const by = operatorOf(c);
      const audit = auditIntent(c, resetCooldownsRoute, 'cooldowns.reset', logger, {
        filter: auditFilter(filter),
        matched: matches.length,
      });
      const cleared = await store.bulk.resetCooldowns(
        matches.map(({ view }) => ({ kind: view.kind, target: view.target })),
        { by, audit },
        (pair) => {
          hub?.cooldowns.wroteCooldown(pair.kind, pair.target, undefined);
          metrics.cooldownCleared.inc({ kind: pair.kind, reason: 'operator' });
        },
      );
      const done = cleared.filter(Boolean).length;
      logger.info({ ...logged, done, by }, 'cooldowns reset by operator');
      return c.json({ ...bulkResult(matches, false, done), deleted: done }, 200);
    });
}
