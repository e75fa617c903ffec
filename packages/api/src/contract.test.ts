import type { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { ROUTES } from './document.js';
import { parkTargetsRoute, resetCooldownsRoute } from './routes/cooldowns.js';

type Route = (typeof ROUTES)[number];
const name = (r: Route): string => `${r.method.toUpperCase()} ${r.path}`;
const queryOf = (r: Route): z.ZodType | undefined =>
  'request' in r && 'query' in r.request ? r.request.query : undefined;

const mutations = ROUTES.filter((r) => r.method !== 'get');
const readsWithQuery = ROUTES.filter((r) => r.method === 'get' && queryOf(r) !== undefined);

describe('the query of a route', () => {
  it('is declared by every mutation, so that no parameter of a newer client goes unchecked', () => {
    expect(mutations.map(name)).toEqual(
      expect.arrayContaining(['POST /api/v1/tasks', 'DELETE /api/v1/scheduler/cooldowns']),
    );
    for (const route of mutations) expect(queryOf(route), name(route)).toBeDefined();
  });

  it.each(mutations.map((r) => [name(r), r] as const))(
    'of %s refuses parameters it does not know, naming each',
    (_name, route) => {
      // Parameters no release defines: a newer release's would be refused alike.
      const result = queryOf(route)!.safeParse({ force: 'true', confirm: 'yes' });
      expect(result.success).toBe(false);
      expect(result.error?.issues).toContainEqual(
        expect.objectContaining({ code: 'unrecognized_keys', keys: ['force', 'confirm'] }),
      );
    },
  );

  it.each(readsWithQuery.map((r) => [name(r), r] as const))(
    'of %s ignores a parameter it does not know: a read changes nothing',
    (_name, route) => {
      expect(queryOf(route)!.safeParse({ next_release_filter: 'quota' }).success).toBe(true);
    },
  );

  it.each([parkTargetsRoute, resetCooldownsRoute].map((r) => [name(r), r] as const))(
    'of the bulk action %s takes the cooldown list’s filter and a dry run',
    (_name, route) => {
      const result = queryOf(route)!.safeParse({ kind: 'merge_wal', state: 'any', q: 'quota', dry_run: 'true' });
      expect(result.success).toBe(true);
      expect(result.data).toEqual({ kind: 'merge_wal', state: 'any', q: 'quota', dry_run: true });
      expect(queryOf(route)!.safeParse({ q: '' }).success).toBe(false);
    },
  );
});
