import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type HeapSnapshot, compareGroups, indexHeap, retainerChain, retainers } from './heap-diff.js';

/**
 * `pnpm --filter @maintd/soak heap-diff <early> <late> [--top N] [--retainers GROUP]…`: the groups
 * of objects that grew most between two heap snapshots of one process, with what retains them.
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, retainers: { type: 'string', multiple: true } },
  });
  const [earlyFile, lateFile] = positionals;
  if (!earlyFile || !lateFile) throw new Error('usage: heap-diff <early.heapsnapshot> <late.heapsnapshot>');
  const load = async (f: string) => indexHeap(JSON.parse(await readFile(f, 'utf8')) as HeapSnapshot);
  const early = await load(earlyFile);
  const late = await load(lateFile);
  const top = Number(values.top);
  const kb = (b: number): string => `${(b / 1024).toFixed(1)} KB`;
  const changes = compareGroups(early, late).slice(0, top);
  console.log('| group | count before → after | bytes before → after | Δ bytes |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const c of changes)
    console.log(
      `| ${c.group} | ${c.before.count} → ${c.after.count} | ${kb(c.before.bytes)} → ${kb(c.after.bytes)} | ${kb(c.after.bytes - c.before.bytes)} |`,
    );
  const asked = values.retainers ?? changes.slice(0, 8).map((c) => c.group);
  for (const group of asked) {
    console.log(`\nretainers of ${group} (late):`);
    for (const r of retainers(late, group, 6)) console.log(`  ${r.count} × ${r.via}`);
    const chain = retainerChain(late, group);
    console.log(`  main path: ${group} ← ${chain.map((c) => `${c.via} (${c.count})`).join(' ← ')}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
