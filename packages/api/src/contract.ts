/**
 * The conventions every route of the master's API follows (docs/ARCHITECTURE.md §3.4): the
 * body limit, the error body, who may call what, how lists page and answer during an outage, and
 * the helper that states a JSON answer. The routes in `routes/` are built from these.
 */
import { z } from '@hono/zod-openapi';

/** Largest request body accepted (docs/ARCHITECTURE.md §3.4). */
export const MAX_BODY_BYTES = 16 * 1024;

/** The body of every error answer. */
export const ErrorSchema = z
  .object({ error: z.string().describe('What went wrong; a validation error names the field') })
  .openapi('Error', { description: 'The body of every error answer' });

/** The name of the bearer-token security scheme in the document. */
export const BEARER_AUTH = 'bearerAuth';
/** Mutations: the bearer token (see the scheme's description for the loopback exception). */
export const MUTATION_SECURITY = [{ [BEARER_AUTH]: [] }];
/** Reads need no credentials. */
export const OPEN: { [name: string]: string[] }[] = [];

/**
 * The paging convention of every paged list: the next page's URL in a `Link` header
 * (RFC 8288, `rel="next"`), absent on the last page.
 */
export const PAGING_RULE =
  'Paged: while more items follow, the `Link` header holds the URL of the next page (`<…>; rel="next"`, RFC 8288); it is absent on the last page.';

/**
 * What every list route does while etcd is unreachable (docs/ARCHITECTURE.md §3.4, README). Lists are served
 * from a per-master cache that an etcd watch invalidates, and a watch can stay quiet through an
 * outage; so a list is only ever served after a store round trip succeeded within a short
 * interval (one probe shared by every reader), never from the cache alone.
 */
export const LIST_RULE =
  'Like every list, it answers only after a store (etcd) round trip succeeded within the last 250 ms: once etcd has been unreachable that long it answers 503, never a cached copy.';

/** The `Link` header of a paged answer. */
export const LinkHeader = z
  .string()
  .describe(
    'The URL (path and query) of the next page, as `</api/v1/…?…&cursor=…>; rel="next"`; absent on the last page',
  );
/** The headers of a paged answer. */
export const pageHeaders = { Link: LinkHeader.optional() };

/** A JSON answer with this body schema, description and (optionally) headers. */
export const json = <S extends z.ZodType>(schema: S, description: string, headers?: Record<string, z.ZodType>) => ({
  content: { 'application/json': { schema } },
  description,
  ...(headers ? { headers: z.object(headers) } : {}),
});

/** The error answers of every route that reads the store. */
export const errors = {
  400: json(
    ErrorSchema,
    'Invalid request; the message names the field, or the query-string parameter a token was refused in (`token`, `access_token`)',
  ),
  401: json(
    ErrorSchema,
    'Missing or unknown bearer token while MASTER_API_READS=token; the message names the scope needed',
  ),
  503: json(ErrorSchema, 'The store (etcd) cannot be reached; retry later'),
};

/**
 * The query of every mutation (`POST`, `PUT`, `DELETE`): strict, so that a parameter this release
 * does not know is refused (400 naming it) rather than ignored. A newer client's filter or dry run
 * sent to an older master then changes nothing instead of acting on more than it asked for
 * (docs/ARCHITECTURE.md §3.4). A route without query parameters declares `mutationQuery({})`.
 * Reads stay lenient: an unknown parameter of a `GET` is ignored, as a newer dashboard's may be.
 */
export const mutationQuery = <S extends z.ZodRawShape>(shape: S) => z.object(shape).strict();

/** The error answers of every mutation: those of a read, plus the access and body-size ones. */
export const mutationErrors = {
  ...errors,
  400: json(ErrorSchema, 'Invalid request; the message names the field, or the unknown query parameter or body field'),
  401: json(ErrorSchema, 'Missing or unknown bearer token (a token is configured); the message names the scope needed'),
  403: json(
    ErrorSchema,
    'A `read` token mutating (the message names `operate`), or a non-loopback client mutating while no token is configured',
  ),
  413: json(ErrorSchema, 'Body over 16 KiB'),
};
