import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock, TaskStore } from '@maintd/core';
import { type CooldownView, storesRoute } from '@maintd/api';
import { CooldownIndex } from '../cooldown-index.js';
import type { AppEnv } from '../http/context.js';
import { nextLinks } from '../http/next-link.js';
import { createRouter } from '../http/router.js';

/** `/api/v1/stores`: the fleet's stores with their latest stats and cooldowns, searched and paged by name. */
export function storeRoutes(deps: { readonly store: TaskStore; readonly clock: Clock }): OpenAPIHono<AppEnv> {
  const { store, clock } = deps;
  const withNextLink = nextLinks();
  return createRouter().openapi(storesRoute, async (c) => {
    const q = c.req.valid('query');
    const [rows, cooldowns, parks] = await Promise.all([
      store.listStats(),
      store.listCooldowns({ all: true }),
      store.listParks(),
    ]);
    const byTarget = new Map<string, CooldownView[]>();
    for (const view of CooldownIndex.from(cooldowns, parks, store.policy).list(undefined, true, clock.now())) {
      byTarget.set(view.target, [...(byTarget.get(view.target) ?? []), view]);
    }
    const search = q.search?.toLowerCase();
    const matching = rows
      .filter((r) => !search || r.name.toLowerCase().includes(search))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const cursor = q.cursor;
    const start = cursor ? matching.findIndex((r) => r.name > cursor) : 0;
    const from = start < 0 ? matching.length : start;
    const page = matching.slice(from, from + q.limit);
    const nextCursor = matching[from + q.limit] ? (page.at(-1)?.name ?? null) : null;
    return c.json(
      {
        stores: page.map((r) => ({ ...r, cooldowns: byTarget.get(r.name) ?? [] })),
        total: matching.length,
        next_cursor: nextCursor,
      },
      200,
      withNextLink(c.req.url, nextCursor, {}),
    );
  });
}
