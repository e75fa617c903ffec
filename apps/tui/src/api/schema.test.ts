import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SCHEMA_PATH, generateApiSchema } from '../../scripts/gen-api.js';

describe('the generated API client types', () => {
  it('match the current master’s OpenAPI document (run `pnpm gen:api` when this fails)', async () => {
    const committed = await readFile(SCHEMA_PATH, 'utf8');
    const fresh = await generateApiSchema();
    expect(committed === fresh, 'src/api/schema.ts is stale: run `pnpm --filter @maintd/tui gen:api`').toBe(true);
  });
});
