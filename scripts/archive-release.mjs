// Packs the four public packages of the current version into releases/<version>/ and writes the
// release's OpenAPI document beside them (docs/RELEASING.md, "Cutting a release"). Run it through
// `pnpm release:archive`, which builds first: the tarballs hold the built dist/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '@maintd/api';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The published packages (docs/ARCHITECTURE.md §1), by workspace directory. */
const PUBLISHED = ['packages/core', 'apps/master', 'apps/exporter', 'apps/tui'];

const version = JSON.parse(readFileSync(join(root, 'packages/core/package.json'), 'utf8')).version;
for (const dir of PUBLISHED) {
  const v = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).version;
  if (v !== version)
    throw new Error(`${dir} is at ${v}, @maintd/core at ${version}: run 'pnpm changeset version' first`);
}
// Between releases the tree carries a pre-release version (changesets' pre mode): releases/ keeps
// releases only, the bases of the upgrade test and of the API check.
if (existsSync(join(root, '.changeset/pre.json')) || version.includes('-'))
  throw new Error(
    `the tree is at ${version}, a pre-release: leave pre mode first ('pnpm changeset pre exit', then 'pnpm changeset version'; docs/RELEASING.md)`,
  );
const out = join(root, 'releases', version);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const dir of PUBLISHED) {
  // pnpm pack turns `workspace:*` into the version, as `pnpm publish` does.
  execFileSync('pnpm', ['pack', '--pack-destination', out], {
    cwd: join(root, dir),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
writeFileSync(join(out, 'openapi.json'), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`releases/${version}: ${readdirSync(out).sort().join(', ')}`);
