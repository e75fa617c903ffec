/**
 * Hostile-input fuzzing of the master's HTTP API with fast-check. It complements the hand-written
 * table of bad requests in app.test.ts: every route gets generated params, queries and bodies
 * (unicode, control characters, `../`, `%2F`, very long strings, wrong JSON types, nested objects,
 * huge, negative and fractional numbers, duplicated keys, random content types and methods), and
 * every answer is held to the documented contract:
 *
 * - with etcd up, no 5xx at all; with etcd down, no 5xx but 503;
 * - every error is JSON `{"error": string}`;
 * - nothing is written outside the master's prefix, and everything written inside it validates.
 *
 * The masters run on a private etcd rather than the run's shared one, so that "every key in
 * etcd" means exactly the keys of this file even when other test files run in parallel: the
 * keyspace check reads the whole of etcd, not only the keys under `/`.
 *
 * A failure prints fast-check's seed and the shrunk request. For a deeper campaign, scale the
 * run counts: `FUZZ_SCALE=20 npx vitest run src/api.fuzz.test.ts --testTimeout=600000`.
 */
import { Buffer } from 'node:buffer';
import {
  AuditEntrySchema,
  type KeyValue,
  MasterInfoSchema,
  ParkRecordSchema,
  type StoreStats,
  StoreStatsSchema,
  TARGET_PATTERN,
  TargetSchema,
  CapacityRecordSchema,
  TaskCooldownSchema,
  type TaskKind,
  TaskKindSchema,
  type TaskRecord,
  TaskRecordSchema,
  TaskStateSchema,
  TimelineEventSchema,
  targetFromHex,
  targetHex,
} from '@maintd/core';
import { type EtcdServer, startEtcd } from '@maintd/core/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FakeClock, type TestMaster, eventually, openMaster } from '../test/harness.js';
import { KIND_NAMES } from '@maintd/scheduler';
import { MAX_BODY_BYTES } from '@maintd/api';

const SCALE = Math.max(1, Number(process.env.FUZZ_SCALE) || 1);
/** Runs per hostile property (6 properties, a few ms per run). */
const RUNS = 200 * SCALE;
/** Runs of the valid round-trip property (about a dozen requests each). */
const VALID_RUNS = 150 * SCALE;
/** Runs while etcd is down (each request fails fast once the client's circuit is open). */
const DOWN_RUNS = 150 * SCALE;
/** No request may take longer than this, etcd up or down. */
const REQUEST_TIMEOUT_MS = 6000;

// ------------------------------------------------------------------ the contract, restated

// The request schemas as documented (docs/ARCHITECTURE.md §3.4, the OpenAPI document): the oracle that decides
// which generated requests must succeed. Deliberately restated rather than imported from app.ts.
const TaskId = z.uuid({ version: 'v7' });
const Limit = z.coerce.number().int().min(1).max(200).default(50);
const Spec = {
  enqueue: z
    .object({
      // Any well-formed kind is a valid filter or park; only a kind this master runs is enqueued.
      kind: TaskKindSchema.refine((k) => KIND_NAMES.includes(k)),
      target: TargetSchema,
      depends_on: z.array(TaskId).max(16).optional(),
    })
    .strict(),
  listTasks: z.object({
    state: TaskStateSchema.optional(),
    kind: TaskKindSchema.optional(),
    target: TargetSchema.optional(),
    q: z.string().min(1).max(200).optional(),
    limit: Limit,
    cursor: TaskId.optional(),
  }),
  // Without `limit` the whole list (paging options refused); with it a page (`all` refused). A
  // cursor is only ever one the API handed out: none is generated here, so none is valid.
  listCooldowns: z
    .object({
      kind: TaskKindSchema.optional(),
      all: z.enum(['true', 'false', '1', '0']).optional(),
      limit: z.coerce.number().int().min(1).max(200).optional(),
      cursor: z.never().optional(),
      state: z.enum(['cooling', 'parked', 'below', 'lapsed', 'any']).optional(),
      sort: z.enum(['until', 'failures', 'last_failure']).optional(),
      q: z.string().min(1).max(200).optional(),
    })
    .refine((q) =>
      q.limit === undefined
        ? q.cursor === undefined && q.state === undefined && q.sort === undefined
        : q.all === undefined,
    ),
  // A mutation refuses a query parameter it does not know (docs/ARCHITECTURE.md §3.4).
  // The bulk reset takes the list's filter (an absent state is every state) and a dry run.
  resetCooldowns: z
    .object({
      kind: TaskKindSchema.optional(),
      state: z.enum(['cooling', 'parked', 'below', 'lapsed', 'any']).optional(),
      q: z.string().min(1).max(200).optional(),
      dry_run: z
        .enum(['true', 'false', '1', '0'])
        .transform((v) => v === 'true' || v === '1')
        .optional(),
    })
    .strict(),
  stores: z.object({
    search: z
      .string()
      .max(255)
      .regex(/^[A-Za-z0-9._-]*$/)
      .optional(),
    limit: Limit,
    cursor: TargetSchema.optional(),
  }),
};
/** The body media types the enqueue route declares: `application/json` (or `+json`) with parameters. */
const JSON_CONTENT_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;
const ErrorBody = z.object({ error: z.string() }).strict();
const TaskPage = z
  .object({ tasks: z.array(TaskRecordSchema.strict()), total: z.number().int(), next_cursor: z.string().nullable() })
  .strict();
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
/** A park as served inside a cooldown entry: the stored record's fields with ISO 8601 forms of its times. */
const ParkView = ParkRecordSchema.omit({ kind: true, target: true })
  .extend({ parked_at: z.iso.datetime(), until: z.iso.datetime().nullable() })
  .strict()
  .refine((p) => p.parked_at === iso(p.parked_at_ms) && p.until === iso(p.until_ms), {
    message: 'a park time is not its ms in ISO 8601',
  });
/**
 * A cooldown entry as served: the stored record plus `until`, the ISO 8601 form of `until_ms`, its
 * `state`, whether it gates this master's automatic work, and the park in force (a parked store that never failed has none of the failure fields).
 */
const CooldownView = TaskCooldownSchema.extend({
  failures: z.number().int().nonnegative(),
  until: z.iso.datetime().nullable(),
  state: z.enum(['cooling', 'below', 'lapsed', 'parked']),
  gating: z.boolean(),
  last_error_class: TaskCooldownSchema.shape.last_error_class.optional(),
  cause: z
    .string()
    .regex(/^[0-9a-f]{12}$/)
    .optional(),
  first_failure_ms: TaskCooldownSchema.shape.first_failure_ms.optional(),
  last_failure_ms: TaskCooldownSchema.shape.last_failure_ms.optional(),
  last_task_id: TaskCooldownSchema.shape.last_task_id.optional(),
  parked: ParkView.optional(),
})
  .strict()
  .refine((c) => (c.state === 'parked') === (c.parked !== undefined), { message: '`parked` present but not parked' })
  // A park in force always gates; a count below the threshold or a lapsed window never does.
  .refine((c) => (c.state === 'parked' ? c.gating : c.state === 'cooling' || !c.gating), {
    message: '`gating` contradicts `state`',
  })
  .refine((c) => c.until === (c.until_ms === null ? null : new Date(c.until_ms).toISOString()), {
    message: '`until` is not `until_ms` in ISO 8601',
  });
const StoreRow = StoreStatsSchema.extend({ cooldowns: z.array(CooldownView) }).strict();
const StorePage = z
  .object({ stores: z.array(StoreRow), total: z.number().int(), next_cursor: z.string().nullable() })
  .strict();
const Deleted = z.object({ deleted: z.number().int().nonnegative() }).strict();
/** A bulk reset's answer: `deleted` as before its filter, and the bulk result. */
const BulkReset = z
  .object({
    deleted: z.number().int().nonnegative(),
    dry_run: z.boolean(),
    count: z.number().int().nonnegative(),
    done: z.number().int().nonnegative(),
    entries: z.array(CooldownView),
  })
  .strict();
/** Whether a served entry matches a search as the API documents it: store name or last error, ignoring case. */
const searched = (c: { target: string; last_error: string }, q: string | undefined): boolean =>
  q === undefined ||
  c.target.toLowerCase().includes(q.toLowerCase()) ||
  c.last_error.toLowerCase().includes(q.toLowerCase());
/** Every status the API may answer a loopback client with while etcd is up. */
const STATUSES_UP = [200, 202, 400, 404, 413, 415];

// ------------------------------------------------------------------ sending and checking

/** One generated request. `body` is only ever set for methods that may carry one. */
interface RequestSpec {
  readonly method: string;
  readonly path: string;
  readonly contentType?: string | undefined;
  readonly authorization?: string | undefined;
  readonly body?: string | Uint8Array | undefined;
}

/** A request as sent (after fetch's normalisation) and what came back. */
interface Exchange {
  readonly method: string;
  readonly path: string;
  /** The content type the request carried (fetch adds `text/plain` to a bare string body). */
  readonly requestType: string | null;
  readonly requestBytes: Uint8Array;
  /** The request body as the runtime decodes it for the app (UTF-8, leading BOMs dropped). */
  readonly requestText: string;
  readonly status: number;
  readonly responseType: string;
  readonly text: string;
}

function requestInit(spec: RequestSpec): RequestInit {
  const headers: Record<string, string> = {};
  if (spec.contentType !== undefined) headers['content-type'] = spec.contentType;
  if (spec.authorization !== undefined) headers.authorization = spec.authorization;
  const body = typeof spec.body === 'string' || spec.body === undefined ? spec.body : new Blob([spec.body]);
  return { method: spec.method, headers, ...(body !== undefined ? { body } : {}) };
}

function bytesOf(body: RequestSpec['body']): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  return typeof body === 'string' ? new TextEncoder().encode(body) : body;
}

/** Sends `spec` through the loopback client, bounded by `timeoutMs`; an event stream is cancelled at once. */
async function send(m: TestMaster, spec: RequestSpec, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Exchange> {
  // The request as the app will see it (method case, default content type); it is not sent.
  const probe = new Request(`http://localhost${spec.path}`, requestInit(spec));
  const exchange = async (): Promise<Exchange> => {
    const res = await m.request(spec.path, requestInit(spec));
    const responseType = res.headers.get('content-type') ?? '';
    let text = '';
    if (responseType.startsWith('text/event-stream')) await res.body?.cancel();
    else text = await res.text();
    return {
      method: probe.method,
      path: spec.path,
      requestType: probe.headers.get('content-type'),
      requestBytes: bytesOf(spec.body),
      requestText: await probe.text(),
      status: res.status,
      responseType,
      text,
    };
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${timeoutMs} ms to ${spec.method} ${spec.path}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([exchange(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function show(x: Exchange): string {
  return `${x.method} ${x.path} [${x.requestType ?? 'no content type'}] → ${x.status} ${x.text.slice(0, 300)}`;
}

/** Parses a JSON response body against `schema`, failing with the exchange in the message. */
function bodyOf<T>(x: Exchange, schema: z.ZodType<T>): T {
  expect(x.responseType, show(x)).toMatch(/^application\/json/);
  let raw: unknown;
  try {
    raw = JSON.parse(x.text);
  } catch {
    expect.fail(`response is not JSON: ${show(x)}`);
  }
  const r = schema.safeParse(raw);
  if (!r.success) expect.fail(`response does not match its schema (${r.error.issues[0]?.message}): ${show(x)}`);
  return r.data;
}

/** The status is one of `allowed`, and an error is JSON `{"error": string}` (HEAD answers carry no body). */
function expectAnswer(x: Exchange, allowed: readonly number[]): void {
  expect(allowed, show(x)).toContain(x.status);
  if (x.status >= 400 && x.method !== 'HEAD') bodyOf(x, ErrorBody);
}

/**
 * Counts answers that got past validation, so that a property cannot pass by having every
 * request rejected: each hostile property must also reach the store now and then.
 */
function successes(): { see(x: Exchange): void; expectSome(): void } {
  let n = 0;
  return {
    see: (x) => void (x.status < 300 && n++),
    expectSome: () => expect(n, 'runs answered with a 2xx').toBeGreaterThan(0),
  };
}

// ------------------------------------------------------------------ the keyspace

/** Keys outside the master's prefix that must survive every request unchanged. */
interface Watched {
  readonly m: TestMaster;
  /** Canary key → the revision it was (re)planted at. */
  readonly canaries: Map<string, number>;
}

const CANARY = 'canary: written by the test, outside the prefix';

/** Keys next to the prefix that a traversal, a missing separator or a wrong prefix would hit. */
function canaryKeys(prefix: string): string[] {
  const parent = prefix.slice(0, prefix.lastIndexOf('/'));
  const hex = targetHex('seed-a');
  return [
    prefix,
    `${prefix}-sibling/cooldown/compact/${hex}`,
    `${prefix}0/tasks/01900000-0000-7000-8000-000000000000`,
    `${parent}/cooldown/compact/${hex}`,
    `${parent}/tasks/x`,
    `/cooldown/compact/${hex}`,
    `/maintd/cooldown/compact/${hex}`,
    `/maintd/stats/${hex}`,
    `cooldown/compact/${hex}`,
    'tasks/x',
  ];
}

async function plantCanaries(m: TestMaster): Promise<Watched> {
  const canaries = new Map<string, number>();
  for (const key of canaryKeys(m.config.etcd.prefix)) {
    canaries.set(key, (await m.kv.put(key, CANARY)).revision);
  }
  return { m, canaries };
}

async function removeCanaries(w: Watched): Promise<void> {
  for (const key of w.canaries.keys()) await w.m.kv.delete(key);
}

function parseJson<T>(schema: z.ZodType<T>, value: string): T | undefined {
  try {
    const r = schema.safeParse(JSON.parse(value));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

const isKind = (s: string | undefined): s is TaskKind => TaskKindSchema.safeParse(s).success;
/** The target a key's hex segment names, if it is the canonical hex of a valid target. */
function hexTarget(hex: string | undefined): string | undefined {
  if (hex === undefined || !/^([0-9a-f]{2})+$/.test(hex)) return undefined;
  const target = targetFromHex(hex);
  return TargetSchema.safeParse(target).success && targetHex(target) === hex ? target : undefined;
}

/** What is wrong with a key under the prefix and its value, if anything (docs/ARCHITECTURE.md §2.4 layout). */
function storedProblem(prefix: string, kv: KeyValue): string | undefined {
  const [area, ...parts] = kv.key.slice(prefix.length + 1).split('/');
  const bad = (why: string): string => `${why}: ${JSON.stringify(kv.key)} = ${kv.value.slice(0, 200)}`;
  switch (area) {
    case 'tasks': {
      const t = parseJson(TaskRecordSchema.strict(), kv.value);
      if (!t) return bad('stored task fails TaskRecordSchema');
      if (parts.length !== 1 || t.id !== parts[0]) return bad('task stored under another id');
      return TargetSchema.safeParse(t.target).success ? undefined : bad('stored task target fails TargetSchema');
    }
    case 'queue':
      return parts.length === 2 && isKind(parts[0]) && TaskId.safeParse(parts[1]).success
        ? undefined
        : bad('malformed queue key');
    case 'dedupe':
      return parts.length === 2 && isKind(parts[0]) && hexTarget(parts[1]) && TaskId.safeParse(kv.value).success
        ? undefined
        : bad('malformed dedupe key');
    case 'cooldown': {
      const c = parseJson(TaskCooldownSchema.strict(), kv.value);
      if (!c) return bad('stored cooldown fails TaskCooldownSchema');
      return parts.length === 2 && c.kind === parts[0] && hexTarget(parts[1]) === c.target
        ? undefined
        : bad('cooldown stored under another kind or target');
    }
    case 'parked': {
      const p = parseJson(ParkRecordSchema.strict(), kv.value);
      if (!p) return bad('stored park fails ParkRecordSchema');
      return parts.length === 2 && p.kind === parts[0] && hexTarget(parts[1]) === p.target
        ? undefined
        : bad('park stored under another kind or target');
    }
    case 'timeline': {
      const e = parseJson(TimelineEventSchema.strict(), kv.value);
      if (!e) return bad('stored timeline event fails TimelineEventSchema');
      return parts.length === 3 && e.kind === parts[0] && hexTarget(parts[1]) === e.target && e.id === parts[2]
        ? undefined
        : bad('timeline event stored under another kind, target or id');
    }
    case 'audit': {
      const e = parseJson(AuditEntrySchema, kv.value);
      if (!e) return bad('stored audit entry fails AuditEntrySchema');
      return parts.length === 1 && e.id === parts[0] ? undefined : bad('audit entry stored under another id');
    }
    case 'held':
      return parts.length === 3 && isKind(parts[0]) && hexTarget(parts[1]) && TaskId.safeParse(parts[2]).success
        ? undefined
        : bad('malformed held key');
    case 'manual':
      return parts.length === 2 && isKind(parts[0]) && TaskId.safeParse(parts[1]).success && kv.value === ''
        ? undefined
        : bad('malformed manual lane key');
    case 'capacity': {
      const r = parseJson(CapacityRecordSchema, kv.value);
      return parts.length === 1 && r?.master_id === parts[0] ? undefined : bad('malformed capacity record');
    }
    case 'stats': {
      const s = parseJson(StoreStatsSchema.strict(), kv.value);
      if (!s) return bad('stored stats row fails StoreStatsSchema');
      return parts.length === 1 && hexTarget(parts[0]) === s.name ? undefined : bad('stats row under another name');
    }
    case 'masters':
      return parts.length === 1 && parseJson(MasterInfoSchema, kv.value)?.id === parts[0]
        ? undefined
        : bad('malformed master registration');
    case 'running':
    case 'claims':
    case 'target-locks':
    case 'locks':
    case 'sweeps':
      return parts.length >= 1 ? undefined : bad('malformed key');
    default:
      return bad('key outside the documented layout');
  }
}

/**
 * Reads the whole of etcd and checks that every key written after revision `since` (0: ever)
 * lies under `<prefix>/`, fits the layout and holds a value that validates, and that the
 * canaries outside the prefix are untouched. Damage outside the prefix is repaired after it is
 * reported, so that a failing run does not fail the runs after it (and shrinking stays on the
 * request that did it).
 */
async function expectKeyspaceClean(w: Watched, since: number): Promise<void> {
  const prefix = w.m.config.etcd.prefix;
  // The Kv port ranges by prefix; an empty prefix from key "\0" is the whole keyspace.
  const all = await w.m.kv.range('', { fromKey: '\0' });
  const problems: string[] = [];
  const damaged: string[] = [];
  const seen = new Set<string>();
  for (const kv of all.kvs) {
    const canary = w.canaries.get(kv.key);
    if (canary !== undefined) {
      seen.add(kv.key);
      if (kv.value !== CANARY || kv.modRevision !== canary) {
        problems.push(`canary outside the prefix overwritten: ${JSON.stringify(kv.key)} = ${kv.value.slice(0, 100)}`);
        damaged.push(kv.key);
      }
    } else if (kv.modRevision <= since) {
      continue;
    } else if (!kv.key.startsWith(`${prefix}/`)) {
      problems.push(`key written outside the prefix ${prefix}/: ${JSON.stringify(kv.key)}`);
      await w.m.kv.delete(kv.key);
    } else {
      const problem = storedProblem(prefix, kv);
      if (problem) problems.push(problem);
    }
  }
  for (const key of w.canaries.keys()) {
    if (!seen.has(key)) {
      problems.push(`canary outside the prefix deleted: ${JSON.stringify(key)}`);
      damaged.push(key);
    }
  }
  for (const key of damaged) w.canaries.set(key, (await w.m.kv.put(key, CANARY)).revision);
  expect(problems).toEqual([]);
}

// ------------------------------------------------------------------ arbitraries

const kindArb = fc.constantFrom(...KIND_NAMES);
const validTarget = fc.stringMatching(TARGET_PATTERN);
const taskIdArb = fc.uuid({ version: 7 });
const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });

/** Strings known to hurt: traversal, encodings, controls, lone surrogates, near-miss enums, JS names. */
const SPECIAL = [
  '',
  ' ',
  '.',
  '..',
  '../',
  '../../etc/passwd',
  '..%2F..%2Fx',
  '%2e%2e%2f',
  '%2F',
  '%2f',
  '/',
  '//',
  'a/b',
  '\\',
  '..\\..\\x',
  '%',
  '%zz',
  '%E0%A4%A',
  '%00',
  '\u0000',
  'a\u0000b',
  '\u001b[2J',
  '\r\nx-injected: 1',
  '\t',
  '\u202e',
  '\ufeff',
  '\ud800',
  'é',
  '店',
  '😀',
  '?',
  '#',
  '&',
  '=',
  '+',
  '__proto__',
  'constructor',
  'toString',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '.hidden',
  '-dash',
  'a b',
  'compact ',
  ' compact',
  'COMPACT',
  'merge-wal',
  'queued\u0000',
  'seed-a/..',
  'seed-a%00',
];
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom('1e400', '-1e400', '-0', '0', '-1', '0.5', '1.0', '1e2', '007', ' 5', '5 ', '0x10', '0b11', '+3'),
  fc.constantFrom('1_000', '9007199254740993', '200.0000000000001', '201', '199.9', 'NaN', 'Infinity', '-Infinity'),
);
/** Long strings, some of them repeated traversal and encodings. */
const longString = fc
  .tuple(fc.constantFrom('a', '9', '../', '%2F', 'é', '\u0000', '%'), fc.integer({ min: 128, max: 4000 }))
  .map(([s, n]) => s.repeat(n));
/** A valid target with one hostile piece spliced in. */
const nearTarget = fc
  .tuple(validTarget, fc.nat(), fc.constantFrom(...SPECIAL))
  .map(([t, i, s]) => t.slice(0, i % (t.length + 1)) + s + t.slice(i % (t.length + 1)));
const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme' }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 1, arbitrary: fc.mixedCase(fc.constantFrom(...KIND_NAMES, 'queued', 'done', 'true', 'seed-a')) },
  { weight: 2, arbitrary: nearTarget },
  { weight: 1, arbitrary: longString },
  { weight: 2, arbitrary: numberText },
);

/** `s` with lone surrogates replaced by U+FFFD, as UTF-8 encoding does (`encodeURIComponent` throws on them). */
function wellFormed(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

type Pair = readonly [string, string];
/** A query string: encoded (what a client library sends), or raw (whatever the URL parser makes of it). */
interface Query {
  readonly pairs: readonly Pair[];
  readonly encoded: boolean;
}
function queryArb(keys: readonly string[], value: fc.Arbitrary<string>): fc.Arbitrary<Query> {
  const key = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: hostileString });
  return fc.record({
    pairs: fc.array(fc.tuple(key, value), { maxLength: 5 }),
    encoded: fc.boolean(),
  });
}
function queryString(q: Query): string {
  if (q.pairs.length === 0) return '';
  const part = (s: string): string => (q.encoded ? encodeURIComponent(wellFormed(s)) : s);
  return `?${q.pairs.map(([k, v]) => `${part(k)}=${part(v)}`).join('&')}`;
}
/** The query object a router builds from an encoded query: repeated keys become arrays. */
function queryObject(q: Query): Record<string, string | string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of q.pairs) {
    const key = wellFormed(k);
    if (key !== '') out.set(key, [...(out.get(key) ?? []), wellFormed(v)]);
  }
  return Object.fromEntries([...out].map(([k, vs]) => [k, vs.length === 1 ? vs[0]! : vs]));
}

/** A path segment, percent-encoded or raw. */
interface Segment {
  readonly value: string;
  readonly encoded: boolean;
}
const segmentArb = (value: fc.Arbitrary<string>): fc.Arbitrary<Segment> => fc.record({ value, encoded: fc.boolean() });
const segmentText = (s: Segment): string => (s.encoded ? encodeURIComponent(wellFormed(s.value)) : s.value);
/** An encoded segment routes as itself unless it is empty or a dot segment. */
const routesAsItself = (s: Segment): boolean => s.encoded && !['', '.', '..'].includes(s.value);

/** A JSON value of any type, for fields that want a string. */
const anyJson = fc.jsonValue({ maxDepth: 3 });
const fieldValue = fc.oneof(
  { weight: 2, arbitrary: kindArb },
  { weight: 2, arbitrary: validTarget },
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: anyJson },
);
const dependsValue = fc.oneof(
  fc.uniqueArray(taskIdArb, { maxLength: 3 }),
  fc.array(taskIdArb, { minLength: 15, maxLength: 20 }),
  fc.array(
    fc.oneof(
      taskIdArb,
      fc.uuid(),
      taskIdArb.map((id) => id.toUpperCase()),
      fieldValue,
    ),
    { maxLength: 4 },
  ),
  fieldValue,
);
/** Raw JSON number literals JSON.stringify cannot produce. */
const rawNumber = fc.constantFrom('1e999', '-1e999', '123456789012345678901234567890', '-0', '1E+2', '0.1e-400');
const extraKey = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('kind', 'target', 'depends_on') },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'Kind', 'TARGET', 'priority', 'kind ', '') },
  { weight: 1, arbitrary: hostileString },
);
const extraValue = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fieldValue, dependsValue).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: rawNumber },
);
/** A JSON object as text, so that keys can repeat and numbers can overflow. */
const objectText = fc
  .record({
    kind: fc.oneof(
      { weight: 6, arbitrary: kindArb },
      { weight: 2, arbitrary: fieldValue },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
    target: fc.oneof(
      { weight: 5, arbitrary: validTarget },
      { weight: 3, arbitrary: fieldValue },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
    depends_on: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: dependsValue }),
    extra: fc.oneof(
      { weight: 3, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(fc.tuple(extraKey, extraValue), { minLength: 1, maxLength: 3 }) },
    ),
    extraFirst: fc.boolean(),
  })
  .map(({ kind, target, depends_on, extra, extraFirst }) => {
    const known: [string, string][] = [];
    if (kind !== undefined) known.push(['kind', JSON.stringify(kind)]);
    if (target !== undefined) known.push(['target', JSON.stringify(target)]);
    if (depends_on !== undefined) known.push(['depends_on', JSON.stringify(depends_on)]);
    const entries = extraFirst ? [...extra, ...known] : [...known, ...extra];
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
  });
/** Enqueue bodies: mostly objects, then wrong types, non-JSON, truncations, bytes, and sizes around the limit. */
const enqueueBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { weight: 8, arbitrary: objectText },
  { weight: 2, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 1, arbitrary: fc.tuple(objectText, fc.nat()).map(([t, n]) => t.slice(0, n % (t.length + 1))) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('\ufeff', ' \n\t', '\u0000', '\u00a0', '\ufeff\ufeff'), objectText)
      .map((p) => p.join('')),
  },
  {
    // Whitespace padding keeps a body valid: this lands on both sides of the 16 KiB limit.
    weight: 1,
    arbitrary: fc
      .tuple(objectText, fc.integer({ min: MAX_BODY_BYTES - 40, max: MAX_BODY_BYTES + 40 }))
      .map(([t, size]) => ' '.repeat(Math.max(0, size - new TextEncoder().encode(t).length)) + t),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'null',
      '{}',
      '[]',
      '"compact"',
      '{"kind":"compact","target":"x",}',
      "{'kind':'compact','target':'x'}",
      '{"kind":"compact","target":"x"} trailing',
      '{"kind":"compact","target":"x"}{"kind":"compact","target":"y"}',
      '{"kind":"compact",/*c*/"target":"x"}',
      '{"kind":"compact","target":"x","target":"../x"}',
      '{"kind":"compact","target":"../x","target":"x"}',
      '{"kind":"compact","target":"x","depends_on":[]}',
      'kind=compact&target=x',
    ),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }) },
);
const contentTypeArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/problem+json',
      'application/vnd.maintd.v1+json',
      'application/json;charset=latin1',
      'application/json; charset=',
      'application/json, text/plain',
      'application/jsonx',
      'text/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '*/*',
      '',
    ),
  },
  { weight: 1, arbitrary: printable },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** Methods: the usual ones, lowercase ones, WebDAV-style ones and random tokens. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
const methodArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom('get', 'post', 'delete', 'Put', 'PROPFIND', 'PURGE', 'M-SEARCH') },
  {
    weight: 1,
    arbitrary: fc
      .stringMatching(/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,15}$/)
      .filter((m) => !FORBIDDEN_METHODS.has(m.toUpperCase())),
  },
);
const bodyless = (method: string): boolean => ['GET', 'HEAD'].includes(method.toUpperCase());

const QUERY_KEYS = ['state', 'kind', 'target', 'limit', 'cursor', 'all', 'search'];
const queryValue = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(...TaskStateSchema.options, ...KIND_NAMES, 'true', '1', '0') },
  { weight: 1, arbitrary: validTarget },
  { weight: 1, arbitrary: taskIdArb },
  { weight: 1, arbitrary: taskIdArb.map((id) => id.toUpperCase()) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map(String) },
);

// ------------------------------------------------------------------ the tests

let etcd: EtcdServer;

beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});

describe('API under hostile input (etcd up)', () => {
  let m: TestMaster;
  let w: Watched;
  const seedIds: string[] = [];
  const SEED_COOLDOWNS: readonly (readonly [TaskKind, string])[] = [
    ['compact', 'seed-a'],
    ['merge_wal', 'seed-b'],
    ['compact', 'Beta.1'],
  ];
  const SEED_STORES = ['alpha', 'alphabet', 'Beta.1', '_under', 'a-b_c', '0', 'seed-a', 'z'.repeat(255)];
  let failures = 0;

  /** Makes sure every seed cooldown exists (a bulk reset may have removed them). */
  async function seedCooldowns(): Promise<void> {
    for (const [kind, target] of SEED_COOLDOWNS) {
      if (!(await m.store.getCooldown(kind, target))) {
        await m.store.recordFailure(kind, target, `seed-${failures++}`, 'boom', 'target');
      }
    }
  }

  beforeAll(async () => {
    m = await openMaster([etcd.clientUrl], new FakeClock());
    w = await plantCanaries(m);
    // More tasks than a page of 1 probes for (4 × 2), all at one instant of the fake clock.
    for (const target of ['seed-a', 'seed-b', 'Beta.1', ...Array.from({ length: 9 }, (_, i) => `seed-${i}`)]) {
      const res = await m.request('/api/v1/tasks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'compact', target }),
      });
      seedIds.push(((await res.json()) as { id: string }).id);
    }
    await m.store.putStats(
      SEED_STORES.map((name, i) => ({
        name,
        pending_wal_generations: i,
        fragment_count: i * 2,
        row_count: i * 3,
        owners: ['http://w1'],
        scanned_at: 0,
      })),
    );
    await seedCooldowns();
  });
  afterAll(async () => {
    await removeCanaries(w);
    await m.close();
  });

  it('answers hostile enqueue bodies with 202/200 exactly when the body is a valid request, else a JSON 4xx, and stores only valid tasks', async () => {
    const ok = successes();
    await fc.assert(
      fc.asyncProperty(enqueueBody, contentTypeArb, async (body, contentType) => {
        const since = await m.kv.revision();
        const x = await send(m, { method: 'POST', path: '/api/v1/tasks', contentType, body });
        ok.see(x);
        const size = x.requestBytes.length;
        // A JSON media type (or none with an empty body), and a body that parses and validates.
        const typed = x.requestType ? JSON_CONTENT_TYPE.test(x.requestType) : size === 0;
        const parsed = parseJson(Spec.enqueue, x.requestText);
        const input = typed ? parsed : undefined;
        if (size > MAX_BODY_BYTES) expectAnswer(x, [413]);
        else if (!input) expectAnswer(x, [400, 415]);
        else {
          expectAnswer(x, input.depends_on?.length ? [202] : [200, 202]);
          const task = bodyOf(x, TaskRecordSchema.strict());
          expect(task).toMatchObject({ kind: input.kind, target: input.target, source: 'manual' });
          if (input.depends_on?.length) expect(task.depends_on).toEqual([...new Set(input.depends_on)]);
          if (x.status === 202) expect(task).toMatchObject({ state: 'queued', attempt: 0 });
        }
        await expectKeyspaceClean(w, since);
      }),
      { numRuns: RUNS },
    );
    ok.expectSome();
    await expectKeyspaceClean(w, 0);
  });

  it('answers hostile task-list queries with 200 exactly when the query is valid, else a JSON 400, and filters what it lists', async () => {
    const q = queryArb(['state', 'kind', 'target', 'limit', 'cursor', 'q'], queryValue);
    const ok = successes();
    await fc.assert(
      fc.asyncProperty(q, async (query) => {
        const since = await m.kv.revision();
        const x = await send(m, { method: 'GET', path: `/api/v1/tasks${queryString(query)}` });
        ok.see(x);
        expectAnswer(x, query.encoded ? [200, 400] : STATUSES_UP);
        const valid = Spec.listTasks.safeParse(queryObject(query));
        if (query.encoded) expect(x.status, show(x)).toBe(valid.success ? 200 : 400);
        if (x.status === 200) {
          const page = bodyOf(x, TaskPage);
          const ids = page.tasks.map((t) => t.id);
          expect(ids, 'newest first').toEqual([...ids].sort().reverse());
          if (query.encoded && valid.success) {
            const f = valid.data;
            expect(page.tasks.length).toBeLessThanOrEqual(f.limit);
            if (f.cursor !== undefined) expect(ids.filter((id) => id > f.cursor!)).toEqual([]);
            for (const t of page.tasks) {
              expect(t).toMatchObject({
                ...(f.state ? { state: f.state } : {}),
                ...(f.kind ? { kind: f.kind } : {}),
                ...(f.target ? { target: f.target } : {}),
              });
              if (f.q !== undefined) expect(searched({ target: t.target, last_error: t.error ?? '' }, f.q)).toBe(true);
            }
          }
        }
        await expectKeyspaceClean(w, since);
      }),
      {
        numRuns: RUNS,
        examples: [
          // Found by this property (FUZZ_SCALE=10, seed 1917305260) and pinned until the store is
          // fixed: a valid cursor far in the future, over more tasks than a page of 1 probes for
          // (4 × 2) created in one millisecond, exhausts TaskStore's 64 newest-first probes
          // (18 widening the window down from the year 4000, then 46 bisecting) and the API
          // answers 503 "too much contention on this record; retry" with etcd up.
          [
            {
              pairs: [
                ['cursor', '3a676dc4-0000-7000-8000-000000000000'],
                ['limit', '1'],
              ],
              encoded: true,
            },
          ],
        ],
      },
    );
    ok.expectSome();
    await expectKeyspaceClean(w, 0);
  });

  it('answers hostile task ids with the task, a JSON 404 or a JSON 400, never anything else', async () => {
    const id = segmentArb(
      fc.oneof(
        { weight: 1, arbitrary: fc.constantFrom(...seedIds) },
        { weight: 1, arbitrary: fc.constantFrom(...seedIds).map((s) => s.toUpperCase()) },
        { weight: 1, arbitrary: taskIdArb },
        { weight: 1, arbitrary: fc.uuid() },
        { weight: 4, arbitrary: hostileString },
        { weight: 1, arbitrary: fc.constantFrom(...seedIds).map((s) => `${s}/..`) },
      ),
    );
    const ok = successes();
    await fc.assert(
      fc.asyncProperty(id, async (seg) => {
        const since = await m.kv.revision();
        const x = await send(m, { method: 'GET', path: `/api/v1/tasks/${segmentText(seg)}` });
        ok.see(x);
        expectAnswer(x, STATUSES_UP);
        if (routesAsItself(seg)) {
          const valid = TaskId.safeParse(seg.value).success;
          expect(valid ? [200, 404] : [400], show(x)).toContain(x.status);
          if (x.status === 200) expect(bodyOf(x, TaskRecordSchema.strict()).id).toBe(seg.value);
          if (x.status === 200) expect(seedIds).toContain(seg.value);
        }
        await expectKeyspaceClean(w, since);
      }),
      { numRuns: RUNS },
    );
    ok.expectSome();
    await expectKeyspaceClean(w, 0);
  });

  it('answers hostile cooldown list and reset requests per the contract and deletes only the cooldown named', async () => {
    const kindSeg = segmentArb(fc.oneof({ weight: 2, arbitrary: kindArb }, { weight: 1, arbitrary: hostileString }));
    const targetSeg = segmentArb(
      fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom(...SEED_COOLDOWNS.map(([, t]) => t)) },
        { weight: 1, arbitrary: validTarget },
        { weight: 3, arbitrary: hostileString },
      ),
    );
    const cooldownValue = fc.oneof(
      { weight: 2, arbitrary: hostileString },
      { weight: 2, arbitrary: fc.constantFrom(...KIND_NAMES, 'true', 'false', '1', '0') },
      { weight: 1, arbitrary: fc.constantFrom('cooling', 'parked', 'below', 'lapsed', 'until', 'failures') },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map(String) },
    );
    const request = fc.oneof(
      fc.record({
        op: fc.constant('list' as const),
        query: queryArb(['kind', 'all', 'limit', 'state', 'sort', 'q'], cooldownValue),
      }),
      fc.record({
        op: fc.constant('reset-all' as const),
        query: queryArb(['kind', 'state', 'q', 'dry_run'], cooldownValue),
      }),
      fc.record({ op: fc.constant('reset-one' as const), kind: kindSeg, target: targetSeg }),
    );
    const ok = successes();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        await seedCooldowns();
        const before = new Set((await m.store.listCooldowns({ all: true })).map((c) => `${c.kind}/${c.target}`));
        const since = await m.kv.revision();
        if (r.op === 'reset-one') {
          const x = await send(m, {
            method: 'DELETE',
            path: `/api/v1/scheduler/cooldowns/${segmentText(r.kind)}/${segmentText(r.target)}`,
          });
          ok.see(x);
          expectAnswer(x, STATUSES_UP);
          if (routesAsItself(r.kind) && routesAsItself(r.target)) {
            const valid = isKind(r.kind.value) && TargetSchema.safeParse(r.target.value).success;
            const existed = before.has(`${r.kind.value}/${r.target.value}`);
            expect(x.status, show(x)).toBe(!valid ? 400 : existed ? 200 : 404);
            if (x.status === 200) expect(bodyOf(x, Deleted)).toEqual({ deleted: 1 });
            const after = (await m.store.listCooldowns({ all: true })).map((c) => `${c.kind}/${c.target}`);
            expect(after.sort()).toEqual([...before].filter((k) => k !== `${r.kind.value}/${r.target.value}`).sort());
          }
        } else {
          const path = `/api/v1/scheduler/cooldowns${queryString(r.query)}`;
          const x = await send(m, { method: r.op === 'list' ? 'GET' : 'DELETE', path });
          ok.see(x);
          expectAnswer(x, r.query.encoded ? [200, 400] : STATUSES_UP);
          const schema = r.op === 'list' ? Spec.listCooldowns : Spec.resetCooldowns;
          const valid = schema.safeParse(queryObject(r.query));
          if (r.query.encoded) expect(x.status, show(x)).toBe(valid.success ? 200 : 400);
          if (x.status === 200 && r.op === 'list') {
            const list = bodyOf(x, z.array(CooldownView));
            if (r.query.encoded && valid.success) {
              const f = Spec.listCooldowns.parse(queryObject(r.query));
              for (const c of list) {
                if (f.kind) expect(c.kind).toBe(f.kind);
                expect(searched(c, f.q), `${c.target} matches ${f.q}`).toBe(true);
              }
            }
          }
          if (x.status === 200 && r.op === 'reset-all') {
            const body = bodyOf(x, BulkReset);
            expect(body.deleted).toBe(body.done);
            expect(body.entries).toHaveLength(Math.min(body.count, 100));
            const after = (await m.store.listCooldowns({ all: true })).map((c) => `${c.kind}/${c.target}`);
            expect(after.length).toBe(before.size - body.done);
            if (r.query.encoded && valid.success) {
              const f = Spec.resetCooldowns.parse(queryObject(r.query));
              for (const c of body.entries) {
                if (f.kind) expect(c.kind).toBe(f.kind);
                if (f.state && f.state !== 'any') expect(c.state).toBe(f.state);
                expect(searched(c, f.q)).toBe(true);
              }
              if (f.dry_run) expect(body.done).toBe(0);
              else if (f.state === undefined && f.q === undefined) {
                // Every record of the kind, whatever its state: as the reset before its filter did.
                expect(body.done).toBe([...before].filter((k) => !f.kind || k.startsWith(`${f.kind}/`)).length);
              }
            }
          }
        }
        await expectKeyspaceClean(w, since);
      }),
      { numRuns: RUNS },
    );
    ok.expectSome();
    await expectKeyspaceClean(w, 0);
  });

  it('answers hostile store searches, limits and cursors with 200 exactly when valid, else a JSON 400, and pages by name', async () => {
    const value = fc.oneof(
      { weight: 3, arbitrary: hostileString },
      { weight: 1, arbitrary: fc.constantFrom(...SEED_STORES, 'ALPHA', 'a', '.', '-') },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map(String) },
    );
    const ok = successes();
    await fc.assert(
      fc.asyncProperty(queryArb(['search', 'limit', 'cursor'], value), async (query) => {
        const since = await m.kv.revision();
        const x = await send(m, { method: 'GET', path: `/api/v1/stores${queryString(query)}` });
        ok.see(x);
        expectAnswer(x, query.encoded ? [200, 400] : STATUSES_UP);
        const valid = Spec.stores.safeParse(queryObject(query));
        if (query.encoded) expect(x.status, show(x)).toBe(valid.success ? 200 : 400);
        if (x.status === 200) {
          const page = bodyOf(x, StorePage);
          const names = page.stores.map((s) => s.name);
          expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
          if (query.encoded && valid.success) {
            const { search, limit, cursor } = valid.data;
            const matching = SEED_STORES.filter((n) => !search || n.toLowerCase().includes(search.toLowerCase()));
            expect(page.total).toBe(matching.length);
            expect(names.length).toBeLessThanOrEqual(limit);
            for (const n of names) expect(matching).toContain(n);
            if (cursor !== undefined) expect(names.filter((n) => n <= cursor)).toEqual([]);
          }
        }
        await expectKeyspaceClean(w, since);
      }),
      { numRuns: RUNS },
    );
    ok.expectSome();
    await expectKeyspaceClean(w, 0);
  });

  it('answers random methods, mangled paths, queries and bodies on every route without a 5xx, errors as JSON', async () => {
    const request = anyRequest(seedIds[0]!);
    const ok = successes();
    await fc.assert(
      fc.asyncProperty(request, async (spec) => {
        const since = await m.kv.revision();
        const x = await send(m, spec);
        ok.see(x);
        expectAnswer(x, STATUSES_UP);
        await expectKeyspaceClean(w, since);
      }),
      { numRuns: RUNS },
    );
    ok.expectSome();
    await expectKeyspaceClean(w, 0);
  });
});

/** Every route and a few near-misses, as concrete paths. */
function realPaths(taskId: string): string[] {
  return [
    '/api/v1/tasks',
    `/api/v1/tasks/${taskId}`,
    '/api/v1/scheduler/cooldowns',
    '/api/v1/scheduler/cooldowns/compact/seed-a',
    '/api/v1/stores',
    '/api/v1/masters',
    '/api/v1/workers',
    '/api/v1/events',
    '/api/v1/openapi.json',
    '/healthz',
    '/readyz',
    '/metrics',
    '/',
    '/api/v1',
    '/api/v1/tasks/',
    '/api/v1/scheduler/cooldowns/compact',
    '/api/v1/scheduler/cooldowns/compact/seed-a/extra',
  ];
}

/**
 * Any request at all: random methods on real paths (mangled or not), with hostile queries and,
 * where the method allows one, hostile bodies and content types.
 */
function anyRequest(taskId: string): fc.Arbitrary<RequestSpec> {
  const paths = realPaths(taskId);
  const path = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...paths) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...paths),
          fc.constantFrom('/', '//', '/..', '/../..', '/%2e%2e', '%2F', '/.', '#', '%', '%00', '/x', ';x', '%20'),
        )
        .map(([p, s]) => p + s),
    },
    { weight: 1, arbitrary: fc.constantFrom(...paths).map((p) => p.toUpperCase()) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            '/api/v1',
            '/api/v1/tasks',
            '/api/v1/scheduler/cooldowns',
            '/api/v1/scheduler/cooldowns/compact',
          ),
          fc.array(segmentArb(hostileString), { minLength: 1, maxLength: 3 }),
        )
        .map(([base, segs]) => `${base}/${segs.map(segmentText).join('/')}`),
    },
    { weight: 1, arbitrary: fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)) },
  );
  return fc
    .record({
      method: methodArb,
      path,
      query: fc.option(queryArb(QUERY_KEYS, queryValue), { nil: undefined }),
      contentType: contentTypeArb,
      authorization: fc.option(
        fc.oneof(
          printable,
          printable.map((s) => `Bearer ${s}`),
        ),
        { nil: undefined, freq: 4 },
      ),
      body: fc.option(fc.oneof(enqueueBody, hostileString), { nil: undefined }),
    })
    .map(({ method, path, query, contentType, authorization, body }) => ({
      method,
      path: path + (query ? queryString(query) : ''),
      contentType,
      authorization,
      body: bodyless(method) ? undefined : body,
    }))
    .filter(
      // HEAD on the event stream leaves a subscriber behind for good: the answer drops the
      // stream's body without cancelling it (reported separately, not what this file checks).
      (spec) => !(spec.method.toUpperCase() === 'HEAD' && /events/i.test(safeDecode(spec.path))),
    );
}

/** Every list route, with and without a query: each answers 503 while etcd is down (docs/ARCHITECTURE.md §3.4). */
const LIST_PATHS = [
  '/api/v1/tasks',
  '/api/v1/tasks?kind=compact&limit=5',
  '/api/v1/scheduler/cooldowns',
  '/api/v1/scheduler/cooldowns?all=true',
  '/api/v1/stores',
  '/api/v1/masters',
  '/api/v1/workers',
];

/** Valid requests that need etcd, on every route that reads or writes it. */
function storeRequest(taskId: string): fc.Arbitrary<RequestSpec> {
  const get = (path: string): RequestSpec => ({ method: 'GET', path });
  return fc.oneof(
    fc.record({ kind: kindArb, target: validTarget }).map((b) => ({
      method: 'POST',
      path: '/api/v1/tasks',
      contentType: 'application/json',
      body: JSON.stringify(b),
    })),
    fc
      .constantFrom(
        '/api/v1/tasks',
        '/api/v1/tasks?kind=compact&limit=5',
        '/api/v1/tasks?target=seed-a&state=queued',
        `/api/v1/tasks?cursor=${taskId}`,
        `/api/v1/tasks/${taskId}`,
        '/api/v1/scheduler/cooldowns',
        '/api/v1/scheduler/cooldowns?kind=merge_wal&all=true',
        '/api/v1/stores',
        '/api/v1/stores?search=a&limit=1',
        '/api/v1/masters',
      )
      .map(get),
    fc
      .tuple(fc.constantFrom('', '?kind=compact'), fc.constant(undefined))
      .map(([q]) => ({ method: 'DELETE', path: `/api/v1/scheduler/cooldowns${q}` })),
    fc
      .tuple(kindArb, validTarget)
      .map(([k, t]) => ({ method: 'DELETE', path: `/api/v1/scheduler/cooldowns/${k}/${t}` })),
  );
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

describe('API round trip of valid input', () => {
  let m: TestMaster;
  let w: Watched;

  beforeAll(async () => {
    m = await openMaster([etcd.clientUrl], new FakeClock());
    w = await plantCanaries(m);
  });
  afterAll(async () => {
    await removeCanaries(w);
    await m.close();
  });

  // About 1,800 requests against etcd: 13 s alone on two cores, past the default 30 s when other
  // packages' tests share the cores. It asserts what comes back, never how fast.
  it('returns what was posted for any valid kind and target, through get, list, cooldown reset and stores', async () => {
    const active = new Map<string, TaskRecord>(); // dedupe-able task per kind/target
    const perPair = new Map<string, number>(); // tasks created per kind/target
    const stats: StoreStats[] = [];
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        kindArb,
        validTarget,
        fc.option(fc.uniqueArray(taskIdArb, { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 4 }),
        fc.nat({ max: 1_000_000 }),
        fc.integer({ min: 20, max: 200 }),
        async (kind, target, dependsOn, rows, limit) => {
          const since = await m.kv.revision();
          const pair = `${kind}/${target}`;
          const t = encodeURIComponent(target);
          const x = await send(m, {
            method: 'POST',
            path: '/api/v1/tasks',
            contentType: 'application/json',
            body: JSON.stringify({ kind, target, ...(dependsOn ? { depends_on: dependsOn } : {}) }),
          });
          const known = dependsOn ? undefined : active.get(pair);
          expectAnswer(x, [known ? 200 : 202]);
          const task = bodyOf(x, TaskRecordSchema.strict());
          if (known) expect(task).toEqual(known);
          else {
            expect(task).toEqual({
              id: task.id,
              kind,
              target,
              state: 'queued',
              source: 'manual',
              enqueued_at: task.enqueued_at,
              attempt: 0,
              ...(dependsOn ? { depends_on: dependsOn } : {}),
            });
            if (!dependsOn) active.set(pair, task);
            perPair.set(pair, (perPair.get(pair) ?? 0) + 1);
          }

          const one = await send(m, { method: 'GET', path: `/api/v1/tasks/${task.id}` });
          expectAnswer(one, [200]);
          expect(bodyOf(one, TaskRecordSchema.strict())).toEqual(task);

          const list = await readAll(
            m,
            `/api/v1/tasks?kind=${kind}&target=${t}&limit=${limit}`,
            TaskPage,
            (p) => p.tasks,
          );
          expect(list.total).toBe(perPair.get(pair));
          expect(list.items).toHaveLength(list.total);
          expect(list.items).toContainEqual(task);
          for (const listed of list.items) expect(listed).toMatchObject({ kind, target });

          // Cooldowns come from failures only: one is recorded through the store, then reset through the API.
          const reset = `/api/v1/scheduler/cooldowns/${kind}/${t}`;
          const none = await send(m, { method: 'DELETE', path: reset });
          expectAnswer(none, [404]);
          expect(bodyOf(none, ErrorBody)).toEqual({ error: `no cooldown or park for ${kind} '${target}'` });
          await m.store.recordFailure(kind, target, task.id, 'boom', 'target');
          const listed = await send(m, { method: 'GET', path: `/api/v1/scheduler/cooldowns?kind=${kind}&all=true` });
          expectAnswer(listed, [200]);
          const cooldowns = bodyOf(listed, z.array(CooldownView));
          expect(cooldowns.filter((c) => c.target === target)).toMatchObject([
            { kind, target, failures: 1, last_task_id: task.id },
          ]);
          const deleted = await send(m, { method: 'DELETE', path: reset });
          expectAnswer(deleted, [200]);
          expect(bodyOf(deleted, Deleted)).toEqual({ deleted: 1 });
          expectAnswer(await send(m, { method: 'DELETE', path: reset }), [404]);

          // A stats row under this name is served back with its (now empty) cooldowns.
          const row: StoreStats = {
            name: target,
            pending_wal_generations: rows % 97,
            fragment_count: rows,
            row_count: rows * 7,
            owners: [`http://w${n++ % 3}`],
            scanned_at: 0,
          };
          await m.store.putStats([row]);
          const i = stats.findIndex((s) => s.name === target);
          if (i >= 0) stats[i] = row;
          else stats.push(row);
          const found = await readAll(m, `/api/v1/stores?search=${t}&limit=${limit}`, StorePage, (p) => p.stores);
          expect(found.total).toBe(stats.filter((s) => s.name.toLowerCase().includes(target.toLowerCase())).length);
          expect(found.items).toHaveLength(found.total);
          expect(found.items).toContainEqual({ ...row, cooldowns: [] });
          const after = await send(m, { method: 'GET', path: `/api/v1/stores?cursor=${t}&limit=200` });
          expectAnswer(after, [200]);
          const later = bodyOf(after, StorePage).stores.map((s) => s.name);
          expect(later.filter((name) => name <= target)).toEqual([]);
          await expectKeyspaceClean(w, since);
        },
      ),
      { numRuns: VALID_RUNS },
    );
    await expectKeyspaceClean(w, 0);
  }, 120_000);
});

/** Every item of a paged list, following `next_cursor` from `path` (which already has a query). */
async function readAll<P extends { total: number; next_cursor: string | null }, T>(
  m: TestMaster,
  path: string,
  schema: z.ZodType<P>,
  items: (page: P) => readonly T[],
): Promise<{ items: T[]; total: number }> {
  const out: T[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const x = await send(m, { method: 'GET', path: cursor === null ? path : `${path}&cursor=${cursor}` });
    expectAnswer(x, [200]);
    const page = bodyOf(x, schema);
    out.push(...items(page));
    if (page.next_cursor === null) return { items: out, total: page.total };
    cursor = encodeURIComponent(page.next_cursor);
  }
  return expect.fail(`more than 1000 pages of ${path}`);
}

describe('API while etcd is down', () => {
  it(
    'answers every request within the deadline with no 5xx but a JSON 503, and serves again once etcd is back',
    async () => {
      const own = await startEtcd();
      let running: EtcdServer | undefined = own;
      let m: TestMaster | undefined;
      try {
        const clock = new FakeClock();
        m = await openMaster([own.clientUrl], clock);
        const seed = await m.request('/api/v1/tasks', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ kind: 'compact', target: 'seed-a' }),
        });
        const taskId = ((await seed.json()) as { id: string }).id;
        // Every list read once with the event watch live, so that each has a kept copy to (not) serve.
        m.events.start();
        await eventually(() => expect(m!.events.live).toBe(true));
        for (const path of LIST_PATHS) expect((await send(m, { method: 'GET', path })).status, path).toBe(200);
        await own.stop({ keepData: true });
        running = undefined;
        // A list trusts the last successful probe of etcd for 250 ms: the outage has lasted longer.
        await clock.advance(250);
        const master = m;
        let unavailable = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              { weight: 2, arbitrary: storeRequest(taskId) },
              { weight: 1, arbitrary: anyRequest(taskId) },
              {
                weight: 1,
                arbitrary: fc
                  .tuple(enqueueBody, contentTypeArb)
                  .map(([body, contentType]) => ({ method: 'POST', path: '/api/v1/tasks', contentType, body })),
              },
            ),
            async (spec) => {
              const x = await send(master, spec);
              if (x.status === 503) unavailable++;
              const probe = safeDecode(new URL(`http://localhost${x.path}`).pathname) === '/readyz';
              if (probe && x.status === 503) {
                // The readiness probe's 503 is its documented report, not an error.
                if (x.method !== 'HEAD')
                  expect(JSON.parse(x.text), show(x)).toMatchObject({ ready: false, store: 'unavailable' });
              } else expectAnswer(x, [...STATUSES_UP, 503]);
            },
          ),
          { numRuns: DOWN_RUNS },
        );
        // The property reached the store: about half of the requests needed etcd.
        expect(unavailable).toBeGreaterThan(DOWN_RUNS / 5);
        // One rule for every list: no copy kept from before the outage is served while it lasts.
        for (const path of LIST_PATHS) {
          const x = await send(master, { method: 'GET', path });
          expect(x.status, show(x)).toBe(503);
          expect(bodyOf(x, ErrorBody), show(x)).toEqual({ error: 'the store (etcd) is unavailable; retry later' });
        }

        running = await startEtcd({ dataDir: own.dataDir, clientPort: own.clientPort, peerPort: own.peerPort });
        await eventually(async () => {
          const x = await send(master, { method: 'GET', path: `/api/v1/tasks/${taskId}` });
          expect(x.status, show(x)).toBe(200);
        }, 20_000);
      } finally {
        // Bring etcd back so that the master can close cleanly, then stop it for good.
        if (!running) {
          running = await startEtcd({ dataDir: own.dataDir, clientPort: own.clientPort, peerPort: own.peerPort }).catch(
            () => undefined,
          );
        }
        if (m) await withDeadline(m.close(), 15_000).catch(() => undefined);
        await (running ?? own).stop();
      }
    },
    120_000 * SCALE,
  );
});

async function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not done in ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
