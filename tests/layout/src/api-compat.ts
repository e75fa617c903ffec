/**
 * Which differences between two OpenAPI 3.1 documents of the master's API break a client, under
 * the compatibility contract in docs/COMPATIBILITY.md: within a major the API only grows.
 *
 * api-smart-diff finds the differences. It resolves every `$ref` in place, so a change to a shared
 * schema shows under each operation that uses it, as a request or as a response, and it classifies
 * most changes the way the contract does. The rules in `contractVerdict` correct it where it differs
 * from the contract or does not read OpenAPI 3.1 (type arrays); each says why.
 */
import { apiCompare, type Diff } from 'api-smart-diff';

/** An OpenAPI document as parsed JSON. */
export type OpenApiDocument = Readonly<Record<string, unknown>>;

/** One change that can break a client of the earlier document. */
export interface BreakingChange {
  /** `METHOD /path`; `document` for a change outside every operation. */
  readonly operation: string;
  /** Where in the operation, e.g. `query parameter kind` or `response 200 (application/json) .tasks[].state`. */
  readonly where: string;
  /** What changed, e.g. `removed` or `type "string" → "integer"`. */
  readonly what: string;
}

type Segment = string | number;
type Side = 'request' | 'response' | 'other';

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** A path segment is a schema keyword unless it names a property (it follows `properties`). */
function keywordAt(path: readonly Segment[], i: number): boolean {
  return i >= 0 && path[i - 1] !== 'properties';
}

/** Whether a diff under `paths` is in what a client sends or in what it receives. */
function sideOf(path: readonly Segment[]): Side {
  if (path[0] !== 'paths') return 'other';
  const part = METHODS.has(String(path[2])) ? path[3] : path[2];
  if (part === 'responses') return 'response';
  if (part === 'parameters' || part === 'requestBody') return 'request';
  return 'other';
}

/** The value at `path`, following local `$ref`s on the way as api-smart-diff did. */
function resolve(doc: unknown, path: readonly Segment[]): unknown {
  let node: unknown = doc;
  for (const segment of path) {
    node = deref(doc, node);
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<Segment, unknown>)[segment];
  }
  return deref(doc, node);
}

function deref(doc: unknown, node: unknown, depth = 0): unknown {
  const ref = (node as { $ref?: unknown } | null | undefined)?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/') || depth > 32) return node;
  const target = ref
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((n, s) => (n as Record<string, unknown> | undefined)?.[s], doc);
  return deref(doc, target, depth + 1);
}

/** The JSON types a schema's `type` admits; no `type` at all admits every value. */
function typeSet(type: unknown): ReadonlySet<string> | 'any' {
  if (type === undefined) return 'any';
  const types: unknown[] = Array.isArray(type) ? type : [type];
  return new Set(types.filter((t): t is string => typeof t === 'string'));
}

/** Whether every value of type set `inner` is also one of `outer` (an integer is a number). */
function covers(outer: ReadonlySet<string> | 'any', inner: ReadonlySet<string> | 'any'): boolean {
  if (outer === 'any') return true;
  if (inner === 'any') return false;
  return [...inner].every((t) => outer.has(t) || (t === 'integer' && outer.has('number')));
}

/** A schema keyword judged as a whole here, however many entries of its array changed. */
interface KeywordNode {
  readonly keyword: 'type' | 'enum';
  readonly path: readonly Segment[];
}

/** The `type` or `enum` a diff touches (the keyword itself or one entry of its array), if any. */
function keywordNode(path: readonly Segment[]): KeywordNode | undefined {
  const n = path.length;
  for (const keyword of ['type', 'enum'] as const) {
    if (path[n - 1] === keyword && keywordAt(path, n - 1)) return { keyword, path };
    if (typeof path[n - 1] === 'number' && path[n - 2] === keyword && keywordAt(path, n - 2)) {
      return { keyword, path: path.slice(0, -1) };
    }
  }
  return undefined;
}

/** The values an `enum` admits; no `enum` at all admits every value. */
function enumSet(values: unknown): ReadonlySet<string> | 'any' {
  return Array.isArray(values) ? new Set(values.map((v) => JSON.stringify(v))) : 'any';
}

/** Whether every value of `inner` is one of `outer`. */
function contains(outer: ReadonlySet<string> | 'any', inner: ReadonlySet<string> | 'any'): boolean {
  if (outer === 'any') return true;
  return inner !== 'any' && [...inner].every((v) => outer.has(v));
}

type Verdict = 'breaking' | 'allowed';

/**
 * The contract's verdict on one diff. `node` is set when the diff touches a schema's `type` or `enum`.
 */
function contractVerdict(
  diff: Diff,
  before: OpenApiDocument,
  after: OpenApiDocument,
  node: KeywordNode | undefined,
): Verdict {
  const path = diff.path as readonly Segment[];
  const n = path.length;
  const side = sideOf(path);
  if (path[0] === 'components') {
    // A client authenticates with a scheme by name: removing one, or changing how it is sent,
    // locks it out (the tool calls a removal non-breaking). Its description is only prose.
    if (path[1] === 'securitySchemes') {
      if (n === 3) return diff.action === 'add' ? 'allowed' : 'breaking';
      return path[n - 1] === 'description' || diff.type === 'annotation' ? 'allowed' : 'breaking';
    }
    // Shared schemas are judged where an operation uses them (api-smart-diff resolves each $ref
    // there, and only there knows whether the schema is sent or received).
    return 'allowed';
  }
  if (node?.keyword === 'type' && side !== 'other') {
    // The tool compares OpenAPI 3.0 types: it calls ["string"] → ["string", "null"] in a response
    // non-breaking and a query parameter narrowed from string to integer non-breaking. Compared
    // here as sets: what a client receives may not widen, what it sends may not narrow.
    const was = typeSet(resolve(before, node.path));
    const now = typeSet(resolve(after, node.path));
    return (side === 'response' ? covers(was, now) : covers(now, was)) ? 'allowed' : 'breaking';
  }
  if (node?.keyword === 'enum' && side !== 'other') {
    // Enum values may be added, in a request and in a response alike: clients must tolerate values
    // they do not know, as Kubernetes requires of its clients (the tool calls an addition to a
    // response breaking). None may be removed, from a response either (the tool lets that go):
    // the contract forbids removing what a release may add. Compared as sets, so that a reorder
    // is no change.
    const was = enumSet(resolve(before, node.path));
    const now = enumSet(resolve(after, node.path));
    return contains(now, was) ? 'allowed' : 'breaking';
  }
  if (diff.action === 'remove' && path[n - 2] === 'properties' && keywordAt(path, n - 2) && side !== 'other') {
    // A removed field breaks a client either way: one that reads it in a response (even an
    // optional one, which the tool lets go), or one that sends it in a request (a strict body
    // rejects it, a lenient one silently ignores it).
    return 'breaking';
  }
  return diff.type === 'breaking' || diff.type === 'unclassified' ? 'breaking' : 'allowed';
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A schema path as a field path (`.tasks[].state`) and the keyword part after it (`enum[4]`). */
function schemaWhere(segments: readonly Segment[]): { field: string; keyword: string } {
  let field = '';
  let i = 0;
  for (; i < segments.length; i++) {
    const s = segments[i];
    if (s === 'properties' && i + 1 < segments.length) field += `.${String(segments[++i])}`;
    else if (s === 'items') field += '[]';
    else if ((s === 'oneOf' || s === 'anyOf' || s === 'allOf') && typeof segments[i + 1] === 'number') {
      field += `.${s}[${String(segments[++i])}]`;
    } else break;
  }
  const keyword = segments
    .slice(i)
    .map((s, j) => (typeof s === 'number' ? `[${s}]` : j === 0 ? s : `.${s}`))
    .join('');
  return { field, keyword };
}

interface Place {
  readonly operation: string;
  readonly where: string;
  readonly keyword: string;
}

/** Names the operation and the place in it that a diff path points at. */
function placeOf(diff: Diff, before: OpenApiDocument, after: OpenApiDocument): Place {
  const path = diff.path as readonly Segment[];
  if (path[0] !== 'paths' || path.length < 2) {
    return { operation: 'document', where: path.map(String).join('.') || '(root)', keyword: '' };
  }
  const url = String(path[1]);
  if (path.length === 2) return { operation: url, where: '(the path)', keyword: '' };
  const hasMethod = METHODS.has(String(path[2]));
  const operation = hasMethod ? `${String(path[2]).toUpperCase()} ${url}` : url;
  const rest = path.slice(hasMethod ? 3 : 2);
  if (rest.length === 0) return { operation, where: '(the operation)', keyword: '' };
  const [part, key, ...tail] = rest;
  if (part === 'parameters' && typeof key === 'number') {
    const at = path.slice(0, (hasMethod ? 3 : 2) + 2);
    const param = (resolve(diff.action === 'add' ? after : before, at) ?? resolve(after, at) ?? {}) as {
      in?: string;
      name?: string;
    };
    const name = `${param.in ?? '?'} parameter ${param.name ?? `#${key}`}`;
    if (tail[0] === 'schema') {
      const { field, keyword } = schemaWhere(tail.slice(1));
      return { operation, where: `${name}${field}`, keyword };
    }
    return { operation, where: name, keyword: tail.map(String).join('.') };
  }
  if (part === 'requestBody' && key === 'content' && tail.length > 0) {
    const [mediaType, schema, ...inner] = tail;
    const { field, keyword } = schema === 'schema' ? schemaWhere(inner) : { field: '', keyword: String(schema ?? '') };
    return { operation, where: `request body (${String(mediaType)})${field ? ` ${field}` : ''}`, keyword };
  }
  if (part === 'responses' && key !== undefined) {
    const [content, mediaType, schema, ...inner] = tail;
    if (content === 'content' && mediaType !== undefined) {
      const { field, keyword } =
        schema === 'schema' ? schemaWhere(inner) : { field: '', keyword: [schema, ...inner].filter(Boolean).join('.') };
      return {
        operation,
        where: `response ${String(key)} (${String(mediaType)})${field ? ` ${field}` : ''}`,
        keyword,
      };
    }
    return { operation, where: `response ${String(key)}`, keyword: tail.map(String).join('.') };
  }
  // Anything else of the operation (its security, a callback): the first key names it.
  return { operation, where: String(part), keyword: schemaWhere(rest.slice(1)).keyword };
}

function describeChange(diff: Diff, keyword: string): string {
  const what = keyword ? `${keyword} ` : '';
  switch (diff.action) {
    case 'add':
      if (keyword) return `${what}added ${show(diff.after)}`;
      return (diff.after as { required?: unknown } | undefined)?.required === true ? 'added, required' : 'added';
    case 'remove':
      return typeof diff.before === 'object' && diff.before !== null
        ? `${what}removed`
        : `${what}removed ${show(diff.before)}`;
    case 'rename':
      return `${what}renamed ${show(diff.before)} → ${show(diff.after)}`;
    default:
      return `${what}${show(diff.before)} → ${show(diff.after)}`;
  }
}

/** The single `event` an alternative of a `oneOf` names itself by (an event stream's message), if it does. */
function eventName(doc: unknown, alternative: unknown): string | undefined {
  const values = (deref(doc, alternative) as { properties?: { event?: { enum?: unknown } } } | undefined)?.properties
    ?.event?.enum;
  return Array.isArray(values) && values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
}

/**
 * `doc` with each `oneOf` whose alternatives each name a distinct single `event` (the messages of
 * `GET /api/v1/events`) rewritten as an object with one optional property per message, named by
 * its event, so that the messages are compared by name. api-smart-diff pairs the alternatives of a
 * `oneOf` by likeness: two messages that both gained fields could swap partners and report changes
 * no client sees. And a new message is a new value of the stream's `event`, which a client ignores
 * as it does a new enum value (docs/COMPATIBILITY.md): an added property here, allowed, where a
 * removed message is a removed property, which breaks.
 */
function messagesByEvent(doc: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(doc) as Record<string, unknown>;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const n = node as Record<string, unknown>;
    const alternatives = n.oneOf;
    if (Array.isArray(alternatives) && alternatives.length > 0) {
      const names = alternatives.map((a) => eventName(copy, a));
      if (names.every((x) => x !== undefined) && new Set(names).size === names.length) {
        delete n.oneOf;
        n.type = 'object';
        n.properties = Object.fromEntries(alternatives.map((a, i) => [names[i], a]));
      }
    }
    for (const value of Object.values(n)) visit(value);
  };
  visit(copy);
  return copy;
}

/**
 * The changes from `before` (the previous release's document) to `after` that break a client of
 * `before`, under the contract in docs/COMPATIBILITY.md. Empty when `after` only grew.
 */
export function breakingChanges(released: OpenApiDocument, current: OpenApiDocument): BreakingChange[] {
  const before = messagesByEvent(released);
  const after = messagesByEvent(current);
  const seen = new Set<string>();
  const changes: BreakingChange[] = [];
  for (const diff of apiCompare(before, after).diffs) {
    const node = keywordNode(diff.path);
    if (contractVerdict(diff, before, after, node) !== 'breaking') continue;
    let change: BreakingChange;
    if (node) {
      // One line per `type` or `enum`, however many entries of its array changed.
      const place = placeOf({ ...diff, path: [...node.path] }, before, after);
      const was = resolve(before, node.path);
      const now = resolve(after, node.path);
      change = {
        operation: place.operation,
        where: place.where,
        what: `${node.keyword} ${show(was)} → ${show(now)}`,
      };
    } else {
      const place = placeOf(diff, before, after);
      change = { operation: place.operation, where: place.where, what: describeChange(diff, place.keyword) };
    }
    const key = `${change.operation}\n${change.where}\n${change.what}`;
    if (seen.has(key)) continue;
    seen.add(key);
    changes.push(change);
  }
  return changes;
}

/** Enough lines to see what broke; a change to a shared schema repeats under every operation. */
const MAX_LINES = 60;

/** The failure message: what broke and where, and where the contract is written. */
export function formatBreakingChanges(changes: readonly BreakingChange[], base: string): string {
  const line = (c: BreakingChange): string => `${c.operation}: ${c.where}: ${c.what}`;
  const lines = changes.slice(0, MAX_LINES).map((c) => `  - ${line(c)}`);
  if (changes.length > MAX_LINES) lines.push(`  ... and ${changes.length - MAX_LINES} more`);
  const first = changes[0];
  // The first line alone says what and where (a CI summary shows only that line).
  return [
    `${changes.length} breaking change(s) to the HTTP API against ${base}${first ? `, first ${line(first)}` : ''} (docs/COMPATIBILITY.md).`,
    'Within a major the API only grows: restore what was removed or narrowed, or add the new shape',
    'beside the old one (a new optional field or parameter, a new operation or path). All of them:',
    ...lines,
  ].join('\n');
}
