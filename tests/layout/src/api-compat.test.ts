/**
 * The HTTP API only grows within a major (docs/COMPATIBILITY.md): the document the route
 * definitions build today is compared with `releases/<version>/openapi.json` of the newest release
 * not newer than the master's own version, and any change that can break a client of that release
 * fails this test, naming the operation and the place in it.
 *
 * The tests after the first prove that the comparison can fail: breaking edits of a copy of the
 * release's document are each reported, additive ones are not.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '@maintd/api';
import { afterAll, describe, expect, it } from 'vitest';
import { type OpenApiDocument, breakingChanges, formatBreakingChanges } from './api-compat.js';
import { checkApiAgainstRelease } from './api-check.js';
import { findPreviousRelease } from './previous-release.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The API is the master's: its version says which release the tree follows. */
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'apps/master/package.json'), 'utf8')) as { version: string })
  .version;
const RELEASES = join(ROOT, 'releases');
const current = openApiDocument() as unknown as OpenApiDocument;
const previous = findPreviousRelease(RELEASES, VERSION).previous;
const baseFile = previous && join(previous.dir, 'openapi.json');

describe('the HTTP API against the previous release (docs/COMPATIBILITY.md)', () => {
  it('has no breaking change against the newest release up to the master version', () => {
    const result = checkApiAgainstRelease(RELEASES, VERSION, current);
    if (result.ok) console.info(`API compatibility: ${result.note}`);
    expect(result.ok, result.ok ? '' : result.message).toBe(true);
  });
});

/** The document the edits below start from: the release's, or today's before the first release. */
const reference: OpenApiDocument =
  baseFile && existsSync(baseFile) ? (JSON.parse(readFileSync(baseFile, 'utf8')) as OpenApiDocument) : current;
type Doc = {
  paths: Record<string, Record<string, { parameters: Record<string, unknown>[]; [k: string]: unknown }>>;
  components: {
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }>;
  };
  [k: string]: unknown;
};
function edited(edit: (doc: Doc) => void): OpenApiDocument {
  const doc = structuredClone(reference) as unknown as Doc;
  edit(doc);
  return doc;
}
const schema = (doc: Doc, name: string): Doc['components']['schemas'][string] => {
  const s = doc.components.schemas[name];
  if (!s) throw new Error(`the reference document has no schema ${name}`);
  return s;
};
const operation = (doc: Doc, path: string, method: string): Doc['paths'][string][string] => {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`the reference document has no ${method.toUpperCase()} ${path}`);
  return op;
};
const queryParam = (doc: Doc, path: string, name: string): Record<string, unknown> => {
  const p = operation(doc, path, 'get').parameters.find((x) => x.name === name && x.in === 'query');
  if (!p) throw new Error(`GET ${path} has no query parameter ${name}`);
  return p;
};

const BREAKING: readonly {
  readonly name: string;
  readonly edit: (doc: Doc) => void;
  readonly operation: string;
  readonly where: RegExp;
}[] = [
  {
    name: 'removing an operation',
    edit: (d) => void delete d.paths['/api/v1/scheduler/cooldowns']?.delete,
    operation: 'DELETE /api/v1/scheduler/cooldowns',
    where: /the operation/,
  },
  {
    name: 'removing a path',
    edit: (d) => void delete d.paths['/api/v1/workers'],
    operation: 'GET /api/v1/workers',
    where: /the operation/,
  },
  {
    name: 'adding a required query parameter',
    edit: (d) =>
      operation(d, '/api/v1/tasks', 'get').parameters.push({
        in: 'query',
        name: 'zone',
        required: true,
        schema: { type: 'string' },
      }),
    operation: 'GET /api/v1/tasks',
    where: /query parameter zone/,
  },
  {
    name: 'making an optional query parameter required',
    edit: (d) => void (queryParam(d, '/api/v1/tasks', 'kind').required = true),
    operation: 'GET /api/v1/tasks',
    where: /query parameter kind/,
  },
  {
    name: 'removing a query parameter',
    edit: (d) => {
      const params = operation(d, '/api/v1/tasks', 'get').parameters;
      params.splice(params.indexOf(queryParam(d, '/api/v1/tasks', 'target')), 1);
    },
    operation: 'GET /api/v1/tasks',
    where: /query parameter target/,
  },
  {
    name: 'removing a required response field',
    edit: (d) => {
      const task = schema(d, 'TaskRecord');
      delete task.properties.state;
      task.required = task.required?.filter((f) => f !== 'state');
    },
    operation: 'GET /api/v1/tasks/{id}',
    where: /response 200 \(application\/json\) \.state/,
  },
  {
    name: 'removing an optional response field',
    edit: (d) => void delete schema(d, 'TaskRecord').properties.detail,
    operation: 'GET /api/v1/tasks',
    where: /response 200 \(application\/json\) \.tasks\[\]\.detail/,
  },
  {
    name: "changing a response field's type",
    edit: (d) => void (schema(d, 'TaskRecord').properties.attempt = { type: 'string', description: 'x' }),
    operation: 'GET /api/v1/tasks/{id}',
    where: /response 200 \(application\/json\) \.attempt/,
  },
  {
    name: 'letting a response field be null (a 3.1 type array)',
    edit: (d) => void (schema(d, 'TaskRecord').properties.owner!.type = ['string', 'null']),
    operation: 'GET /api/v1/tasks/{id}',
    where: /\.owner/,
  },
  {
    name: 'narrowing a query parameter from string to integer',
    edit: (d) => void ((queryParam(d, '/api/v1/tasks', 'target').schema as Record<string, unknown>).type = 'integer'),
    operation: 'GET /api/v1/tasks',
    where: /query parameter target/,
  },
  {
    name: 'removing a 2xx response',
    edit: (d) => void delete (operation(d, '/api/v1/tasks', 'post').responses as Record<string, unknown>)['202'],
    operation: 'POST /api/v1/tasks',
    where: /response 202/,
  },
  {
    name: 'removing an error response',
    edit: (d) => void delete (operation(d, '/api/v1/tasks', 'get').responses as Record<string, unknown>)['400'],
    operation: 'GET /api/v1/tasks',
    where: /response 400/,
  },
  {
    name: 'removing an enum value from a response',
    edit: (d) => {
      const state = schema(d, 'TaskRecord').properties.state as { enum: string[] };
      state.enum = state.enum.filter((v) => v !== 'failed');
    },
    operation: 'GET /api/v1/tasks/{id}',
    where: /response 200 \(application\/json\) \.state/,
  },
  {
    name: 'removing an accepted enum value from a request',
    edit: (d) => {
      const s = queryParam(d, '/api/v1/tasks', 'state').schema as { enum: string[] };
      s.enum = s.enum.filter((v) => v !== 'failed');
    },
    operation: 'GET /api/v1/tasks',
    where: /query parameter state/,
  },
  {
    name: 'adding a required request-body field',
    edit: (d) => {
      const req = schema(d, 'EnqueueRequest');
      req.properties.zone = { type: 'string', description: 'x' };
      req.required = [...(req.required ?? []), 'zone'];
    },
    operation: 'POST /api/v1/tasks',
    where: /request body \(application\/json\)/,
  },
  {
    name: 'making a request-body field required',
    edit: (d) =>
      void (schema(d, 'EnqueueRequest').required = [...(schema(d, 'EnqueueRequest').required ?? []), 'depends_on']),
    operation: 'POST /api/v1/tasks',
    where: /request body \(application\/json\)/,
  },
  {
    name: 'removing a request-body field',
    edit: (d) => void delete schema(d, 'EnqueueRequest').properties.depends_on,
    operation: 'POST /api/v1/tasks',
    where: /request body \(application\/json\) \.depends_on/,
  },
  {
    name: 'tightening a request pattern',
    edit: (d) => void (schema(d, 'EnqueueRequest').properties.target!.pattern = '^[a-z]+$'),
    operation: 'POST /api/v1/tasks',
    where: /request body \(application\/json\) \.target/,
  },
  {
    name: 'tightening a request maximum',
    edit: (d) => void (schema(d, 'EnqueueRequest').properties.depends_on!.maxItems = 2),
    operation: 'POST /api/v1/tasks',
    where: /\.depends_on/,
  },
  {
    name: 'adding security to an open operation',
    edit: (d) => {
      const scheme = Object.keys(d.components.securitySchemes)[0]!;
      operation(d, '/api/v1/stores', 'get').security = [{ [scheme]: [] }];
    },
    operation: 'GET /api/v1/stores',
    where: /security/,
  },
  {
    name: 'removing a message of the event stream',
    edit: (d) => {
      const stream = schema(d, 'EventMessage') as unknown as { oneOf: { properties: { event: { enum: string[] } } }[] };
      stream.oneOf = stream.oneOf.filter((m) => m.properties.event.enum[0] !== 'task_deleted');
    },
    operation: 'GET /api/v1/events',
    where: /response 200 \(text\/event-stream\) \.task_deleted/,
  },
  {
    name: 'removing a security scheme',
    edit: (d) => void (d.components.securitySchemes = {}),
    operation: 'document',
    where: /components\.securitySchemes\./,
  },
];

const ADDITIVE: readonly { readonly name: string; readonly edit: (doc: Doc) => void }[] = [
  {
    name: 'a new path',
    edit: (d) =>
      void (d.paths['/api/v1/zones'] = {
        get: {
          parameters: [],
          operationId: 'listZones',
          summary: 'Zones',
          responses: {
            '200': { description: 'The zones', content: { 'application/json': { schema: { type: 'object' } } } },
          },
        },
      }),
  },
  {
    name: 'a new operation on an existing path',
    edit: (d) =>
      void (d.paths['/api/v1/workers']!.post = {
        parameters: [],
        operationId: 'addWorker',
        responses: { '204': { description: 'Added' } },
      }),
  },
  {
    name: 'an optional query parameter',
    edit: (d) =>
      operation(d, '/api/v1/tasks', 'get').parameters.push({
        in: 'query',
        name: 'zone',
        required: false,
        schema: { type: 'string' },
      }),
  },
  {
    name: 'an optional request-body field',
    edit: (d) => void (schema(d, 'EnqueueRequest').properties.zone = { type: 'string', description: 'x' }),
  },
  {
    name: 'a response field, optional or always present',
    edit: (d) => {
      const task = schema(d, 'TaskRecord');
      task.properties.zone = { type: 'string', description: 'x' };
      task.properties.rack = { type: 'string', description: 'x' };
      task.required = [...(task.required ?? []), 'zone'];
    },
  },
  {
    name: 'a new enum value in a response',
    edit: (d) => void (schema(d, 'TaskRecord').properties.state!.enum as string[]).push('parked'),
  },
  {
    name: 'a new enum value accepted in a request',
    edit: (d) => void (queryParam(d, '/api/v1/tasks', 'state').schema as { enum: string[] }).enum.push('parked'),
  },
  {
    name: 'a new response code',
    edit: (d) =>
      void ((operation(d, '/api/v1/tasks', 'post').responses as Record<string, unknown>)['409'] = {
        description: 'Conflict',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      }),
  },
  {
    name: 'a looser request maximum and a wider query type',
    edit: (d) => {
      schema(d, 'EnqueueRequest').properties.depends_on!.maxItems = 64;
      (queryParam(d, '/api/v1/tasks', 'limit').schema as Record<string, unknown>).type = ['integer', 'string'];
    },
  },
  {
    name: 'a new message on the event stream, and fields added to two of its messages',
    edit: (d) => {
      const stream = schema(d, 'EventMessage') as unknown as { oneOf: Record<string, unknown>[] };
      // Fields in two messages made api-smart-diff pair them crosswise when they were compared by likeness.
      schema(d, 'TaskRecord').properties.zone = { type: 'string', description: 'x' };
      schema(d, 'TaskRecord').properties.rack = { type: 'string', description: 'x' };
      schema(d, 'Cooldown').properties.gating = { type: 'boolean', description: 'x' };
      stream.oneOf.push({
        type: 'object',
        properties: {
          event: { type: 'string', enum: ['zone'], description: 'x' },
          data: { type: 'object', description: 'x' },
        },
        required: ['event', 'data'],
      });
    },
  },
  {
    name: 'reworded descriptions, reordered parameters and enum values',
    edit: (d) => {
      (d.info as { description: string }).description = 'Reworded.';
      operation(d, '/api/v1/tasks', 'get').parameters.reverse();
      (schema(d, 'TaskRecord').properties.state!.enum as string[]).reverse();
    },
  },
];

describe('the API compatibility check (docs/COMPATIBILITY.md)', () => {
  it('finds no change between a document and itself', () => {
    expect(breakingChanges(reference, structuredClone(reference))).toEqual([]);
  });

  it.each(BREAKING)('reports $name, naming the operation and the place', ({ edit, operation: op, where }) => {
    const changes = breakingChanges(reference, edited(edit));
    expect(changes, 'no breaking change reported').not.toEqual([]);
    const message = formatBreakingChanges(changes, 'release 9.9.9');
    expect(
      changes.some((c) => c.operation === op && where.test(c.where)),
      `expected a change at ${op}, ${String(where)}; got:\n${message}`,
    ).toBe(true);
    expect(message).toContain(op);
    expect(message).toContain('docs/COMPATIBILITY.md');
  });

  it.each(ADDITIVE)('lets $name through', ({ edit }) => {
    expect(breakingChanges(reference, edited(edit))).toEqual([]);
  });
});

describe('the previous release', () => {
  const dir = mkdtempSync(join(tmpdir(), 'maintd-releases-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is the newest version directory not newer than the tree, compared as versions, not names', () => {
    for (const name of ['0.9.0', '0.10.0', '0.11.0', 'notes']) mkdirSync(join(dir, name));
    expect(findPreviousRelease(dir, '0.10.2').previous?.version).toBe('0.10.0');
    expect(findPreviousRelease(dir, '1.0.0').previous?.version).toBe('0.11.0');
    expect(findPreviousRelease(dir, '0.1.0')).toEqual({ all: ['0.9.0', '0.10.0', '0.11.0'] });
  });

  it('is absent when there is no releases directory', () => {
    expect(findPreviousRelease(join(dir, 'missing'), '0.0.0')).toEqual({ all: [] });
  });
});

describe('the check against a release directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'maintd-api-check-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const release = (root: string, version: string, doc?: OpenApiDocument): void => {
    mkdirSync(join(root, version), { recursive: true });
    if (doc) writeFileSync(join(root, version, 'openapi.json'), JSON.stringify(doc));
  };
  const failure = (result: ReturnType<typeof checkApiAgainstRelease>): string => (result.ok ? '' : result.message);

  it('passes with nothing to compare only while the tree was never released', () => {
    expect(checkApiAgainstRelease(join(dir, 'none'), '0.0.0', current)).toMatchObject({ ok: true });
    const cut = checkApiAgainstRelease(join(dir, 'none'), '0.1.0', current);
    expect(cut.ok).toBe(false);
    expect(failure(cut)).toMatch(/at 0\.1\.0, but releases\/ holds no release.*openapi\.json.*docs\/COMPATIBILITY\.md/);
  });

  it('fails when the release directory has no openapi.json', () => {
    const root = join(dir, 'bare');
    release(root, '0.1.0');
    expect(failure(checkApiAgainstRelease(root, '0.1.0', current))).toMatch(
      /releases\/0\.1\.0\/openapi\.json is missing/,
    );
  });

  it('fails on a breaking change against the newest release, naming it; the older release is not the base', () => {
    const root = join(dir, 'two');
    release(
      root,
      '0.1.0',
      edited((d) => void delete d.paths['/api/v1/tasks']?.get),
    );
    release(
      root,
      '0.2.0',
      edited((d) => void (d.paths['/api/v1/old'] = { get: { parameters: [], responses: {} } })),
    );
    const result = checkApiAgainstRelease(root, '0.2.1', current);
    expect(failure(result)).toMatch(/against release 0\.2\.0 \(releases\/0\.2\.0\/openapi\.json\)/);
    expect(failure(result)).toMatch(/GET \/api\/v1\/old: \(the operation\): removed/);
    expect(failure(result)).toContain('docs/COMPATIBILITY.md');
    // 0.1.0 lacked GET /api/v1/tasks: the tree only grew since.
    expect(checkApiAgainstRelease(root, '0.1.5', current)).toMatchObject({ ok: true });
  });

  it('lets a new major break the API', () => {
    const root = join(dir, 'major');
    release(
      root,
      '0.9.0',
      edited((d) => void (d.paths['/api/v1/old'] = { get: { parameters: [], responses: {} } })),
    );
    expect(checkApiAgainstRelease(root, '1.0.0', current)).toMatchObject({ ok: true });
  });
});
