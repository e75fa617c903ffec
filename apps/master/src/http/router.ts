import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './context.js';
import { invalidRequest } from './errors.js';

/**
 * A sub-app for one resource's routes, mounted on the app with `app.route('/', …)`: the route
 * definitions carry their full paths, and every sub-app answers a request its schemas refuse
 * alike.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: invalidRequest });
}
