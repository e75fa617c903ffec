import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/** The package a bare specifier names and the subpath it asks of it (`.` for the root). */
export function splitSpecifier(spec: string): { readonly name: string; readonly subpath: string } | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || spec.includes(':')) return undefined;
  const parts = spec.split('/');
  const n = spec.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, n).join('/');
  const rest = parts.slice(n).join('/');
  return { name, subpath: rest === '' ? '.' : `./${rest}` };
}

/**
 * Every module specifier `text` names: imports and re-exports (type-only ones too), `import()`
 * with a literal, in code or in a type (`typeof import('./x.js')`). A parse, not a scan:
 * `ts.preProcessFile` misses `export * as ns from`.
 */
export function specifiers(path: string, text: string): string[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX);
  const out: string[] = [];
  const literal = (node: ts.Node | undefined): void => {
    if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) out.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** A workspace package: its directory (relative to the root) and its `exports` map. */
export interface WorkspacePackage {
  readonly dir: string;
  readonly exports?: unknown;
}

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts'];

/** The first of `stem`'s source files (`x.ts`, `x.tsx`, …, `x/index.ts`) that is in `known`. */
function sourceOf(stem: string, known: ReadonlySet<string>): string | undefined {
  const candidates = [stem, ...EXTENSIONS.map((e) => stem + e), ...EXTENSIONS.map((e) => join(stem, `index${e}`))];
  return candidates.find((c) => known.has(c));
}

/** The source file behind the entry point `subpath` of a workspace package (`./dist/x.js` → `src/x.ts`). */
function entrySource(pkg: WorkspacePackage, subpath: string, known: ReadonlySet<string>): string | undefined {
  const { exports } = pkg;
  const entry =
    typeof exports === 'string'
      ? subpath === '.' && exports
      : typeof exports === 'object' && exports !== null && (exports as Record<string, unknown>)[subpath];
  const conditions = entry as { readonly import?: unknown; readonly default?: unknown } | undefined;
  const target = typeof entry === 'string' ? entry : (conditions?.import ?? conditions?.default);
  if (typeof target !== 'string' || !target.startsWith('./dist/')) return undefined;
  return sourceOf(join(pkg.dir, 'src', target.slice('./dist/'.length).replace(/\.[cm]?jsx?$/, '')), known);
}

/**
 * Each of `files` (paths relative to `root`) with the files among them it imports: relative
 * specifiers resolved as TypeScript's NodeNext does (`./x.js` → `x.ts` or `x.tsx`, a folder →
 * its `index`), a workspace package's name to the source of the entry point its exports map names.
 */
export function importGraph(
  root: string,
  files: readonly string[],
  packages: ReadonlyMap<string, WorkspacePackage> = new Map(),
): Map<string, string[]> {
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const targets = specifiers(file, readFileSync(join(root, file), 'utf8')).flatMap((spec) => {
        if (spec.startsWith('.')) {
          const target = sourceOf(join(dirname(file), spec).replace(/\.[cm]?jsx?$/, ''), known);
          return target ? [target] : [];
        }
        const bare = splitSpecifier(spec);
        const pkg = bare && packages.get(bare.name);
        const target = pkg && bare && entrySource(pkg, bare.subpath, known);
        return target ? [target] : [];
      });
      return [file, [...new Set(targets)]];
    }),
  );
}

/** The workspace packages in the folders under each of `tops` (`apps`, `packages`), by name. */
export function workspacePackages(root: string, tops: readonly string[]): Map<string, WorkspacePackage> {
  return new Map(
    tops.flatMap((top) =>
      readdirSync(join(root, top), { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(root, top, d.name, 'package.json')))
        .map((d) => {
          const dir = join(top, d.name);
          const m = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
            name: string;
            exports?: unknown;
          };
          return [m.name, { dir, exports: m.exports }] as const;
        }),
    ),
  );
}

/**
 * The import circles of `graph`: its strongly connected components (Tarjan) of more than one
 * file, or of one file that imports itself; each sorted, the list by its first file.
 */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Each file's visit order and the lowest visit order it reaches back to on the stack.
  const seen = new Map<string, { readonly index: number; low: number }>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): { readonly index: number; low: number } => {
    const node = { index: seen.size, low: seen.size };
    seen.set(v, node);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      const next = seen.get(w);
      if (next === undefined) node.low = Math.min(node.low, connect(w).low);
      else if (onStack.has(w)) node.low = Math.min(node.low, next.index);
    }
    if (node.low !== node.index) return node;
    // v is the root of a component: it and everything above it on the stack.
    const component = stack.splice(stack.lastIndexOf(v));
    for (const w of component) onStack.delete(w);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
    return node;
  };
  for (const v of graph.keys()) if (!seen.has(v)) connect(v);
  return out.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}
