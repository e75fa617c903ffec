import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { importCircles, importGraph, splitSpecifier, workspacePackages } from './import-graph.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.turbo', 'test-results', 'coverage']);

/** Every file below `dir` (relative to the root), build output and installed packages aside. */
function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((d) => {
    if (SKIP_DIRS.has(d.name)) return [];
    const path = join(dir, d.name);
    return d.isDirectory() ? walk(path) : [path];
  });
}

/** The source files the shape goals count: apps and packages, tests and generated files aside. */
function counted(): string[] {
  return ['apps', 'packages']
    .flatMap(walk)
    .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
    .filter((f) => !/auto-generated/.test(readFileSync(join(ROOT, f), 'utf8').slice(0, 300)));
}

/** The source files whose imports may form no circle: apps and packages, tests and test helpers aside. */
function circleSources(): string[] {
  return ['apps', 'packages']
    .flatMap(walk)
    .filter((f) => /\.[cm]?tsx?$/.test(f) && !/\.test\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
    .filter((f) => !f.split(sep).includes('test'));
}

/** Each import circle of `graph` as one line: its files. */
function circleLines(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return importCircles(graph).map((files) => `${files.length} files: ${files.join(', ')}`);
}

/** Lines as `wc -l` counts them. */
function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** A Kv adapter may run to 600 lines: it maps a whole client onto the port in one place. */
function lineLimit(path: string): number {
  return /packages[\\/]core[\\/]src[\\/]kv[\\/](etcd|memory)\.ts$/.test(path) ? 600 : 500;
}

/** `file:line Name (N lines)` for each class in `text` longer than `limit` lines. */
export function longClasses(path: string, text: string, limit: number): string[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > limit) out.push(`${path}:${start + 1} ${node.name?.text ?? '(anonymous)'} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

type Exports = string | null | { readonly [key: string]: Exports } | readonly Exports[];

/** Whether `subpath` is one that a package's `exports` map offers (exact keys and `*` patterns). */
export function exported(exportsField: Exports | undefined, subpath: string): boolean {
  // Without an exports map every file is reachable by Node, but only the root is an entry point.
  if (exportsField === undefined) return subpath === '.';
  if (typeof exportsField === 'string' || Array.isArray(exportsField)) return subpath === '.';
  const keys = Object.keys(exportsField as object);
  // Conditions only (`{ import, types }`): the root alone.
  if (!keys.some((k) => k.startsWith('.'))) return subpath === '.';
  return keys.some((k) => {
    if ((exportsField as Record<string, Exports>)[k] === null) return false;
    if (!k.includes('*')) return k === subpath;
    const [before, after] = k.split('*') as [string, string];
    return subpath.startsWith(before) && subpath.endsWith(after) && subpath.length >= before.length + after.length;
  });
}

/** The manifest of `name` as the package at `pkgDir` resolves it (its node_modules, then the root's). */
function manifestOf(pkgDir: string, name: string): { exports?: Exports } | undefined {
  for (const base of [join(ROOT, pkgDir), ROOT]) {
    const path = join(base, 'node_modules', name, 'package.json');
    if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8')) as { exports?: Exports };
  }
  return undefined;
}

/** `file → specifier` for each import of a dependency's path that its `exports` map does not offer. */
function internalImports(): string[] {
  return ['apps', 'packages', 'tests', 'tools', 'bench']
    .flatMap((top) => (existsSync(join(ROOT, top)) ? walk(top) : []))
    .filter((f) => /\.(tsx?|mjs|js)$/.test(f) && !f.endsWith('.d.ts'))
    .flatMap((file) => {
      const parts = file.split(sep);
      const pkgDir = parts[0] === 'bench' ? '.' : parts.slice(0, 2).join('/');
      const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
      return importedFiles.flatMap(({ fileName }) => {
        const spec = splitSpecifier(fileName);
        if (!spec) return [];
        const manifest = manifestOf(pkgDir, spec.name);
        // Unresolvable here (an optional peer, a type-only virtual module): nothing to judge.
        if (!manifest) return [];
        return exported(manifest.exports, spec.subpath) ? [] : [`${file} → ${fileName}`];
      });
    });
}

/** Text that sends a reader of the repository to a document outside it. */
const OUTSIDE = /\.\.\/shared\/|shared\/DESIGN|DESIGN\.md|\bDESIGN\b|shared\/reference/;

describe('the shape of the code (docs/ARCHITECTURE.md §1)', () => {
  it('has no source file over 500 lines (a Kv adapter: 600)', () => {
    const long = counted().flatMap((f) => {
      const n = lineCount(readFileSync(join(ROOT, f), 'utf8'));
      return n > lineLimit(f) ? [`${f} (${n} lines)`] : [];
    });
    expect(long).toEqual([]);
  });

  it('has no class over 300 lines', () => {
    const long = counted().flatMap((f) => longClasses(f, readFileSync(join(ROOT, f), 'utf8'), 300));
    expect(long).toEqual([]);
  });

  it('imports no path of a dependency that its exports map does not offer', () => {
    expect(internalImports()).toEqual([]);
  });

  it('has no import circle among the source files of apps and packages, type-only imports included', () => {
    const graph = importGraph(ROOT, circleSources(), workspacePackages(ROOT, ['apps', 'packages']));
    expect(graph.size).toBeGreaterThan(100);
    expect(circleLines(graph)).toEqual([]);
  });

  it('finds a circle of any kind of import, across a folder index and across packages', () => {
    const root = mkdtempSync(join(tmpdir(), 'layout-circles-'));
    try {
      const files: Record<string, string> = {
        'apps/a/package.json': JSON.stringify({ name: '@x/a' }),
        'apps/a/src/one.ts': "import type { Two } from './two.js';\nexport type One = Two;\n",
        'apps/a/src/two.ts': "export { type One as Two } from './one.js';\n",
        'apps/a/src/three.tsx': "export const load = () => import('./four/index.js');\n",
        'apps/a/src/four/index.ts': "import { type T } from '../three.js';\nexport type U = T;\n",
        'apps/a/src/five.ts': "import { x } from '@x/b';\nexport type F = typeof import('./five.js');\n",
        'apps/a/src/six.ts': "import { one } from './one.js';\n// import './seven.js'\n",
        'packages/b/package.json': JSON.stringify({ name: '@x/b', exports: { '.': { import: './dist/index.js' } } }),
        'packages/b/src/index.ts': "export * as a from '../../../apps/a/src/five.js';\n",
      };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      const sources = Object.keys(files).filter((f) => f.endsWith('.ts') || f.endsWith('.tsx'));
      const graph = importGraph(root, sources, workspacePackages(root, ['apps', 'packages']));
      expect(graph.get('apps/a/src/six.ts')).toEqual(['apps/a/src/one.ts']);
      expect(circleLines(graph)).toEqual([
        '2 files: apps/a/src/five.ts, packages/b/src/index.ts',
        '2 files: apps/a/src/four/index.ts, apps/a/src/three.tsx',
        '2 files: apps/a/src/one.ts, apps/a/src/two.ts',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('tells a circle from a diamond (Tarjan)', () => {
    const graph = new Map([
      ['a', ['b', 'c']],
      ['b', ['d']],
      ['c', ['d']],
      ['d', []],
      ['e', ['f']],
      ['f', ['g', 'e']],
      ['g', ['e', 'g']],
      ['h', ['h']],
    ]);
    expect(importCircles(graph)).toEqual([['e', 'f', 'g'], ['h']]);
  });

  it('cites no document outside the repository', () => {
    const files = walk('.').filter((f) => /\.(tsx?|mjs|js|cjs|json|md|ya?ml|sh|service|toml)$|(^|\/)run$/.test(f));
    const cites = files.flatMap((f) =>
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          OUTSIDE.test(line) && !f.endsWith('shape.test.ts') ? [`${relative('.', f)}:${i + 1}`] : [],
        ),
    );
    expect(cites).toEqual([]);
  });

  it('tells an internal path from an exported one', () => {
    const inkLike = { '.': { import: './build/index.js' }, './package.json': './package.json' };
    expect(exported(inkLike, '.')).toBe(true);
    expect(exported(inkLike, './build/output.js')).toBe(false);
    expect(exported({ '.': './a.js', './testing': './t.js', './x/*': './x/*.js' }, './x/y')).toBe(true);
    expect(exported({ import: './a.js' }, './b')).toBe(false);
    expect(splitSpecifier('@maintd/core/testing')).toEqual({ name: '@maintd/core', subpath: './testing' });
    expect(splitSpecifier('ink/build/output.js')).toEqual({ name: 'ink', subpath: './build/output.js' });
    expect(splitSpecifier('node:fs')).toBeUndefined();
  });

  it('measures a class from its declaration to its closing brace', () => {
    const text = `export class A {\n${'  x = 1;\n'.repeat(5)}}\n`;
    expect(longClasses('a.ts', text, 6)).toEqual(['a.ts:1 A (7 lines)']);
    expect(longClasses('a.ts', text, 7)).toEqual([]);
  });
});
