// @ts-check
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const noDirectTime = [
  { object: 'Date', property: 'now', message: 'Use the injected Clock.' },
  { object: 'Math', property: 'random', message: 'Use the injected Random.' },
];

// A dependency is used through its public API only (docs/ARCHITECTURE.md §1): no import of a path
// past a package's `exports` (its src/, dist/, build/ or lib/), nothing out of node_modules, and
// no relative path into another workspace package. Node refuses most of these at run time anyway;
// what it cannot refuse (a file URL built by hand, as the dashboard once patched Ink) stays a
// review matter.
const internalPaths = [
  {
    regex: '^(?:@[^/]+/)?[^@./][^/]*/(?:src|dist|build|lib|esm|cjs)(?:/|$)',
    message:
      'Import a package by a path its `exports` map offers, never its internals (use `pnpm patch` to change one).',
  },
  { regex: '(?:^|/)node_modules(?:/|$)', message: 'Import a dependency by its name, never by where it is installed.' },
  {
    regex: '^(?:\\.\\./)+(?:apps|packages|tools|tests)/[^/]+/(?:src|dist|build)(?:/|$)',
    message: 'Import a workspace package by its name and `exports`, never by a relative path into it.',
  },
];

// The same, for what no-restricted-imports does not see: an import() of a specifier built at run
// time (a file URL into node_modules, as the dashboard once loaded Ink's output.js by).
const computedImport = {
  selector: "ImportExpression[source.type!='Literal']",
  message: 'Import by a literal specifier: a path built at run time gets past `exports` and this lint.',
};

// Apps never import each other (docs/ARCHITECTURE.md §1): code two apps need lives in a package. Each app's
// sources may not import any other app's package, by name or by a relative path into it.
const APPS = readdirSync(new URL('./apps/', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const appBoundaries = APPS.map((app) => ({
  files: [`apps/${app}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...internalPaths,
          ...APPS.filter((other) => other !== app).flatMap((other) => [
            {
              group: [`@maintd/${other}`, `@maintd/${other}/*`],
              message: 'Apps never import each other (docs/ARCHITECTURE.md §1): move the shared code into a package.',
            },
            {
              group: [`**/apps/${other}/**`, `../../${other}/**`, `../${other}/**`],
              message: 'Apps never import each other (docs/ARCHITECTURE.md §1): move the shared code into a package.',
            },
          ]),
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', '**/test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
        { selector: 'ExportAllDeclaration', message: 'Export names explicitly.' },
        computedImport,
      ],
    },
  },
  {
    // Core logic reads time and randomness only through Clock and Random (docs/ARCHITECTURE.md §2.2).
    files: ['packages/core/src/**/*.ts'],
    ignores: [
      'packages/core/src/clock.ts',
      'packages/core/src/random.ts',
      'packages/core/src/testing/**',
      '**/*.test.ts',
    ],
    rules: {
      'no-restricted-properties': ['error', ...noDirectTime],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use Clock.sleep.' },
        { name: 'setInterval', message: 'Use Clock.sleep in a loop.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
        { selector: 'ExportAllDeclaration', message: 'Export names explicitly.' },
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'Use the injected Clock.' },
        computedImport,
      ],
    },
  },
  {
    // The apps get these in appBoundaries (a later no-restricted-imports replaces an earlier one).
    files: ['packages/**/*.{ts,tsx}', 'tools/**/*.{ts,tsx}', 'tests/**/*.{ts,tsx}'],
    rules: { 'no-restricted-imports': ['error', { patterns: internalPaths }] },
  },
  ...appBoundaries,
  {
    files: ['**/*.config.{js,ts}', 'eslint.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
