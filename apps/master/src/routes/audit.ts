import type { OpenAPIHono } from '@hono/zod-openapi';
import type { TaskStore } from '@maintd/core';
import { auditEntryView, listAuditRoute } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { nextLinks } from '../http/next-link.js';
import { createRouter } from '../http/router.js';

/**
 * `GET /api/v1/audit`: the audit trail (docs/ARCHITECTURE.md §2.9), newest first, filtered and
 * paged, read from the store: a read is its own proof that etcd answers, and an operator after an
 * incident wants what committed, not a cache.
 */
export function auditRoutes(deps: { readonly store: TaskStore }): OpenAPIHono<AppEnv> {
  const { store } = deps;
  const withNextLink = nextLinks();
  return createRouter().openapi(listAuditRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await store.audit.read({
      limit: q.limit,
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      ...(q.who !== undefined ? { who: q.who } : {}),
      ...(q.action !== undefined ? { action: q.action } : {}),
      ...(q.kind !== undefined ? { kind: q.kind } : {}),
      ...(q.target !== undefined ? { target: q.target } : {}),
    });
    const next = page.next ?? null;
    return c.json(
      { entries: page.entries.map(auditEntryView), next_cursor: next },
      200,
      withNextLink(c.req.url, next, {}),
    );
  });
}
