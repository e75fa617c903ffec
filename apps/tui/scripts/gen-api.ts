/**
 * Generates `src/api/schema.ts`, the TUI's types of the master's HTTP API, from the OpenAPI
 * document of the master's route definitions in `@maintd/api` (`pnpm gen:api`): no
 * app is built. The schema-freshness test runs the same function and fails when the committed
 * file differs.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '@maintd/api';
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';

/** Where the generated client types live (committed). */
export const SCHEMA_PATH = fileURLToPath(new URL('../src/api/schema.ts', import.meta.url));

/** The text `src/api/schema.ts` must contain: openapi-typescript's output, formatted by prettier. */
export async function generateApiSchema(): Promise<string> {
  const doc = openApiDocument() as Parameters<typeof openapiTS>[0];
  // Not `immutable`: openapi-fetch's Readable<T> maps only mutable arrays, and readonly ones lose their methods.
  const ast = await openapiTS(doc, { silent: true });
  // No list of kinds: the dashboard learns them at run time from the masters' registrations
  // (`GET /api/v1/masters`) and the records it reads.
  const source = COMMENT_HEADER + astToString(ast);
  const options = (await resolveConfig(SCHEMA_PATH)) ?? {};
  return format(source, { ...options, filepath: SCHEMA_PATH });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(SCHEMA_PATH, await generateApiSchema());
  process.stdout.write(`wrote ${SCHEMA_PATH}\n`);
}
