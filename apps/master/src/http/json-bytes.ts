import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';

declare const decodesTo: unique symbol;

/**
 * JSON encoded once, typed by what it decodes to. A list kept for many readers is kept as bytes:
 * a string would be re-encoded into a fresh buffer per response, and many readers of a large
 * list would each hold a copy (docs/SCALING.md).
 */
export type JsonBytes<T> = Uint8Array<ArrayBuffer> & { readonly [decodesTo]: T };

const UTF8 = new TextEncoder();

/** `value` as {@link JsonBytes}. */
export function encodeJson<T>(value: T): JsonBytes<T> {
  // The one place the type is attached: these bytes are `value`'s JSON.
  return UTF8.encode(JSON.stringify(value)) as JsonBytes<T>;
}

/**
 * Answers with JSON bytes encoded earlier, typed as `c.json(value)` would be, so that a route's
 * response schema still checks what a handler sends.
 */
export function sendJson<T, U extends ContentfulStatusCode>(
  c: Context,
  bytes: JsonBytes<T>,
  status: U,
  headers: Record<string, string> = {},
): Response & TypedResponse<JSONParsed<T>, U, 'json'> {
  const res: Response = c.body(bytes, status, { ...headers, 'content-type': 'application/json' });
  return res as Response & TypedResponse<JSONParsed<T>, U, 'json'>;
}
