/**
 * Generates `src/api/schema.ts`, the TUI's types of the master's HTTP API, from the OpenAPI
 * document of the master in this workspace (`pnpm gen:api`). The schema-freshness test runs the
 * same function and fails when the committed file differs.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type AppDeps, createApp, createMetrics } from '@maintd/master';
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';

/** Where the generated client types live (committed). */
export const SCHEMA_PATH = fileURLToPath(new URL('../src/api/schema.ts', import.meta.url));

/**
 * The master's OpenAPI document. Serving it touches none of the app's dependencies, so the
 * store, Kv, clock and logger are inert placeholders: no etcd, no network.
 */
export async function masterOpenApiDocument(): Promise<unknown> {
  const inert = {} as never;
  const deps: AppDeps = {
    store: inert,
    kv: inert,
    clock: inert,
    logger: inert,
    metrics: createMetrics(),
    apiToken: undefined,
  };
  const res = await createApp(deps).request('/api/v1/openapi.json');
  if (!res.ok) throw new Error(`openapi.json: HTTP ${res.status}`);
  return res.json();
}

/** The text `src/api/schema.ts` must contain: openapi-typescript's output, formatted by prettier. */
export async function generateApiSchema(): Promise<string> {
  const doc = (await masterOpenApiDocument()) as Parameters<typeof openapiTS>[0];
  // Not `immutable`: openapi-fetch's Readable<T> maps only mutable arrays, and readonly ones lose their methods.
  const ast = await openapiTS(doc, { silent: true });
  const source = COMMENT_HEADER + astToString(ast);
  const options = (await resolveConfig(SCHEMA_PATH)) ?? {};
  return format(source, { ...options, filepath: SCHEMA_PATH });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(SCHEMA_PATH, await generateApiSchema());
  process.stdout.write(`wrote ${SCHEMA_PATH}\n`);
}
