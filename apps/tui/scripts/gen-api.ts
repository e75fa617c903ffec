/**
 * Generates `src/api/schema.ts`, the TUI's types of the master's HTTP API, from the OpenAPI
 * document of the master's route definitions in `@maintd/scheduler/api` (`pnpm gen:api`): no
 * app is built. The schema-freshness test runs the same function and fails when the committed
 * file differs.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '@maintd/scheduler/api';
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';

/** Where the generated client types live (committed). */
export const SCHEMA_PATH = fileURLToPath(new URL('../src/api/schema.ts', import.meta.url));

/**
 * The kinds the API accepts, in the master's order, read from the document (the enum of the
 * enqueue body's `kind`, inline or behind a `$ref`): the dashboard lists them at run time, so a
 * new kind needs no hand edit.
 */
function taskKinds(doc: unknown): string[] {
  type Schema = { $ref?: string; properties?: { kind?: { enum?: unknown } } };
  const d = doc as {
    paths: Record<string, Record<string, unknown>>;
    components?: { schemas?: Record<string, Schema> };
  };
  const body = d.paths['/api/v1/tasks']?.post as {
    requestBody: { content: { 'application/json': { schema: Schema } } };
  };
  let schema = body.requestBody.content['application/json'].schema;
  if (schema.$ref) schema = d.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] ?? {};
  const kinds = schema.properties?.kind?.enum;
  if (!Array.isArray(kinds) || kinds.length === 0) throw new Error('openapi.json: no kind enum on POST /api/v1/tasks');
  return kinds as string[];
}

/** The text `src/api/schema.ts` must contain: openapi-typescript's output, formatted by prettier. */
export async function generateApiSchema(): Promise<string> {
  const doc = openApiDocument() as Parameters<typeof openapiTS>[0];
  // Not `immutable`: openapi-fetch's Readable<T> maps only mutable arrays, and readonly ones lose their methods.
  const ast = await openapiTS(doc, { silent: true });
  const kinds = `\n/** Every task kind the master accepts, in its order. */\nexport const TASK_KINDS = ${JSON.stringify(taskKinds(doc))} as const;\n`;
  const source = COMMENT_HEADER + astToString(ast) + kinds;
  const options = (await resolveConfig(SCHEMA_PATH)) ?? {};
  return format(source, { ...options, filepath: SCHEMA_PATH });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(SCHEMA_PATH, await generateApiSchema());
  process.stdout.write(`wrote ${SCHEMA_PATH}\n`);
}
