import type { OpenAPIHono } from '@hono/zod-openapi';
import { openApiDocument, openApiRoute } from '@maintd/api';
import type { AppEnv } from '../http/context.js';
import { encodeJson, sendJson } from '../http/json-bytes.js';
import { createRouter } from '../http/router.js';

/** `/api/v1/openapi.json`: the API's OpenAPI document, built from the route definitions once. */
export function openApiRoutes(): OpenAPIHono<AppEnv> {
  const document = encodeJson(openApiDocument());
  return createRouter().openapi(openApiRoute, (c) => sendJson(c, document, 200));
}
