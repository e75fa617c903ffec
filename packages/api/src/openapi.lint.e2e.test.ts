/**
 * The master's OpenAPI document passes two independent linters with no error and no warning:
 * Redocly CLI (`recommended`, `redocly.yaml`) and Spectral (`spectral:oas`, `.spectral.yaml`).
 * Both configs name every rule they turn off, with the reason. The document is built from the
 * route definitions alone, written to a temporary file and linted by the CLIs installed in
 * node_modules (no network: Redocly's telemetry and update check are off).
 *
 * The checks below the linters cover what neither enforces: a description on every schema
 * property, units on every time, a 400 on every operation that takes input (the reason
 * `operation-4xx-response` is off), and the security split between reads and mutations.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEARER_AUTH } from './contract.js';
import { openApiDocument } from './document.js';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string): string => join(PACKAGE_DIR, 'node_modules', '.bin', name);
/** A lint run loads a few hundred modules; on a loaded 2-core machine that takes a while. */
const LINT_TIMEOUT_MS = 120_000;

/** Environment of the lint runs: no telemetry, no update check, no colour codes in the output. */
const LINT_ENV = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
};

interface Problem {
  readonly rule: string;
  readonly severity: string;
  readonly message: string;
  readonly where: string;
}

type Json = Record<string, unknown>;
const doc = openApiDocument() as unknown as Json;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maintd-openapi-'));
  file = join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(doc, null, 2));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs a CLI that exits non-zero when it finds problems; its stdout is the report either way. */
async function report(command: string, args: readonly string[]): Promise<string> {
  try {
    return (await run(command, args, { cwd: PACKAGE_DIR, env: LINT_ENV, maxBuffer: 32 * 1024 * 1024 })).stdout;
  } catch (err) {
    const stdout = (err as { stdout?: unknown }).stdout;
    if (typeof stdout === 'string' && stdout.trim().startsWith('{')) return stdout;
    throw err;
  }
}

describe('the OpenAPI document', () => {
  it(
    'passes Redocly CLI lint (recommended) with 0 errors and 0 warnings',
    async () => {
      const out = await report(bin('redocly'), ['lint', '--config', 'redocly.yaml', '--format', 'json', file]);
      const result = JSON.parse(out) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] }[];
      };
      const problems: Problem[] = result.problems.map((p) => ({
        rule: p.ruleId,
        severity: p.severity,
        message: p.message,
        where: p.location?.[0]?.pointer ?? '',
      }));
      expect(problems).toEqual([]);
      expect(result.totals).toMatchObject({ errors: 0, warnings: 0 });
    },
    LINT_TIMEOUT_MS,
  );

  it(
    'passes Spectral lint (spectral:oas) with 0 errors and 0 warnings',
    async () => {
      // The report goes to a file: Spectral also prints a summary line on stdout. --fail-severity
      // hint: any finding at all makes the exit code non-zero, and the report lists it.
      const output = join(dir, 'spectral.json');
      const failure: Error | undefined = await run(
        bin('spectral'),
        [
          'lint',
          '--ruleset',
          '.spectral.yaml',
          '--format',
          'json',
          '--output',
          output,
          '--fail-severity',
          'hint',
          file,
        ],
        { cwd: PACKAGE_DIR, env: LINT_ENV },
      ).then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
      // No report at all means Spectral itself failed (bad ruleset, crash): show why.
      const out = await readFile(output, 'utf8').catch(() => {
        throw failure ?? new Error('spectral wrote no report');
      });
      const SEVERITY = ['error', 'warning', 'info', 'hint'];
      const problems: Problem[] = (
        JSON.parse(out) as { code: string; severity: number; message: string; path: string[] }[]
      ).map((p) => ({
        rule: p.code,
        severity: SEVERITY[p.severity] ?? String(p.severity),
        message: p.message,
        where: p.path.join('.'),
      }));
      expect(problems).toEqual([]);
    },
    LINT_TIMEOUT_MS,
  );

  const operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, method, op })),
  );

  it('documents every route the master serves', () => {
    expect(operations.map((o) => o.name).sort()).toEqual(
      [
        'DELETE /api/v1/scheduler/cooldowns',
        'DELETE /api/v1/scheduler/cooldowns/{kind}/{target}',
        'GET /api/v1/audit',
        'GET /api/v1/capacity',
        'GET /api/v1/events',
        'GET /api/v1/masters',
        'GET /api/v1/openapi.json',
        'GET /api/v1/scheduler/causes',
        'GET /api/v1/scheduler/cooldowns',
        'GET /api/v1/scheduler/cooldowns/{kind}/{target}',
        'GET /api/v1/scheduler/policy',
        'GET /api/v1/stores',
        'GET /api/v1/tasks',
        'GET /api/v1/tasks/{id}',
        'GET /api/v1/workers',
        'GET /healthz',
        'GET /metrics',
        'GET /readyz',
        'PATCH /api/v1/cluster',
        'POST /api/v1/tasks',
        'PUT /api/v1/scheduler/cooldowns',
        'PUT /api/v1/scheduler/cooldowns/{kind}/{target}',
      ].sort(),
    );
  });

  it('gives every operation an operationId, tags, a summary and a description', () => {
    for (const { name, op } of operations) {
      expect(op.operationId, name).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.tags, name).toHaveLength(1);
      expect(op.summary, name).toEqual(expect.any(String));
      expect((op.description as string).length, name).toBeGreaterThan(30);
    }
  });

  it('declares a 400 on every operation that takes input (what operation-4xx-response would check)', () => {
    for (const { name, op } of operations) {
      const takesInput = ((op.parameters as unknown[] | undefined)?.length ?? 0) > 0 || op.requestBody !== undefined;
      if (takesInput) expect(Object.keys(op.responses as Json), name).toContain('400');
    }
  });

  it('needs the bearer token on mutations only, and explains the loopback exception', () => {
    for (const { name, method, op } of operations) {
      expect(op.security, name).toEqual(method === 'get' ? [] : [{ [BEARER_AUTH]: [] }]);
    }
    const scheme = (doc.components as { securitySchemes: Record<string, Json> }).securitySchemes[BEARER_AUTH];
    expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(scheme?.description).toMatch(/loopback clients may mutate without a token/);
  });

  it('describes every schema property, and says "milliseconds since the Unix epoch" of every time', () => {
    const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
    const missing: string[] = [];
    const unitless: string[] = [];
    const described = (s: Json): boolean => {
      if (typeof s.description === 'string' && s.description.length > 0) return true;
      const ref = s.$ref;
      return typeof ref === 'string' && described(schemas[ref.replace('#/components/schemas/', '')] ?? {});
    };
    const walk = (s: unknown, where: string): void => {
      if (Array.isArray(s)) return s.forEach((x, i) => walk(x, `${where}[${i}]`));
      if (typeof s !== 'object' || s === null) return;
      const props = (s as Json).properties as Record<string, Json> | undefined;
      for (const [key, prop] of Object.entries(props ?? {})) {
        if (!described(prop)) missing.push(`${where}.${key}`);
        // A time says its epoch; a length of time (a window's) says it is one, in milliseconds.
        const unit = /milliseconds since the Unix epoch|^Length of .* in milliseconds$/;
        if (/(_ms|_at)$/.test(key) && !unit.test(String(prop.description))) {
          unitless.push(`${where}.${key}`);
        }
      }
      for (const [key, value] of Object.entries(s)) walk(value, `${where}.${key}`);
    };
    walk(doc, '#');
    expect(missing).toEqual([]);
    expect(unitless).toEqual([]);
    // The walk did see the models (not an empty document).
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['TaskRecord', 'Cooldown', 'Park', 'CooldownPolicy', 'Store', 'MasterInfo']),
    );
  });

  it('declares the servers, and the event payloads as components', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'http://{host}:{port}' })]);
    const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
    for (const name of [
      'HelloEvent',
      'TaskEvent',
      'TaskDeletedEvent',
      'CooldownEvent',
      'TimelineStreamEvent',
      'OverflowEvent',
    ]) {
      expect(schemas[name]?.description, name).toEqual(expect.any(String));
    }
  });
});
