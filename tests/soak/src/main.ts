import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { EtcdKv } from '@maintd/core';
import { ErrorLog } from './errors.js';
import { type Daemon, startFleet } from './fleet.js';
import { GROWTH_LIMIT, parseOptions } from './options.js';
import { formatReport, reportRows, soakJudgeOptions } from './report.js';
import { Sampler } from './sampler.js';
import { runTraffic } from './traffic.js';
import { windowBounds } from './windows.js';

/** A daemon's log file in the out dir: `master a` → `master-a.log`. */
const daemonLogName = (name: string): string => `${name.replace(/\s+/g, '-')}.log`;

/**
 * Counts a daemon's log lines at error level or above (pino: 50, 60), and an exit during the run;
 * keeps all it logs (warnings and up, as the soak runs it) in `log`, so that an error can be
 * placed after the run.
 */
function watchDaemon(d: Daemon, errors: ErrorLog, running: () => boolean, log: WriteStream): void {
  let partial = '';
  const onData = (data: Buffer): void => {
    // A child's pipes may deliver after its exit, when the run has closed its log.
    if (!log.writableEnded) log.write(data);
    const lines = (partial + data.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (/"level":(50|60)\b/.test(line)) errors.record(`${d.name} log`, line);
  };
  d.child.proc.stdout?.on('data', onData);
  d.child.proc.stderr?.on('data', onData);
  void d.child.exited.then((code) => {
    if (running()) errors.record(`${d.name} exit`, `exited during the run: ${code}`);
  });
}

/** Tasks each master ran, from its own `master_tasks_total`. */
async function tasksRun(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  return [...text.matchAll(/^master_tasks_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2), process.env);
  const outDir = resolve(o.outDir);
  await mkdir(outDir, { recursive: true });
  const startMs = Date.now();
  const endMs = startMs + o.minutes * 60_000;
  console.log(
    `soak: ${o.minutes} min, a sample every ${o.sampleSecs} s, warm-up ${o.warmupMinutes} min, windows of ${o.windowMinutes.toFixed(1)} min`,
  );
  const fleet = await startFleet(startMs, endMs, outDir);
  const errors = new ErrorLog();
  let running = true;
  const logs = [...fleet.masters, fleet.exporter].map((d) => {
    const log = createWriteStream(join(outDir, daemonLogName(d.name)));
    log.write(d.child.output()); // what it logged while starting
    watchDaemon(d, errors, () => running, log);
    return log;
  });
  const kv = new EtcdKv({ endpoints: [fleet.etcd.clientUrl] });
  const sampler = await Sampler.open([...fleet.masters, fleet.exporter], kv, fleet.prefix);
  const stopTraffic = new AbortController();
  const traffic = runTraffic(fleet, stopTraffic.signal, errors);
  const masterNames = fleet.masters.map((m) => m.name);
  const snapshots: string[] = [];
  let earlyTaken = !o.heapSnapshots;
  try {
    for (;;) {
      const atMin = (Date.now() - startMs) / 60_000;
      if (atMin >= o.minutes) break;
      await sampler.sample(atMin);
      if (!earlyTaken && atMin >= o.warmupMinutes) {
        earlyTaken = true;
        snapshots.push(...(await sampler.snapshots(outDir, 'early', masterNames)));
      }
      const elapsed = Math.round(atMin * 10) / 10;
      if (Math.floor(atMin * 60) % 60 < o.sampleSecs) {
        const heaps = [...sampler.series]
          .filter(([n]) => n.endsWith(' heap'))
          .map(([n, s]) => `${n} ${((s[s.length - 1]?.value ?? 0) / 1048576).toFixed(1)} MB`);
        console.log(`${elapsed} min: ${heaps.join(', ')}, errors ${errors.total}`);
        // A long run may be cut short (a host's maintenance, a session's end): its samples and
        // errors so far survive it, once a minute.
        await writeFile(
          `${outDir}/soak-samples.json`,
          `${JSON.stringify({ samples: Object.fromEntries(sampler.series), errors: errors.lines() })}\n`,
        );
      }
      await delay(o.sampleSecs * 1000);
    }
    if (o.heapSnapshots) snapshots.push(...(await sampler.snapshots(outDir, 'late', masterNames)));
  } finally {
    stopTraffic.abort();
  }
  const counts = await traffic;
  const tasks = (await Promise.all(fleet.masters.map((m) => tasksRun(m.url)))).reduce((a, b) => a + b, 0);
  running = false;
  await sampler.close();
  await kv.close();
  await fleet.stop();
  await Promise.all(logs.map(async (log) => finished(log.end())));

  const rows = reportRows(
    sampler.series,
    windowBounds(o.minutes, o.warmupMinutes, o.windowMinutes),
    soakJudgeOptions(fleet.masters.length, o.heapSnapshots),
  );
  const goals = rows.filter((r) => r.judged);
  const pass = goals.every((r) => r.verdict.pass) && errors.total === 0;
  console.log(`\n${formatReport(rows)}\n`);
  console.log(
    `tasks run ${tasks}; reads ${counts.reads}, events ${counts.events}, dashboard updates ${counts.feedUpdates}, manual runs ${counts.manualRuns}, parks ${counts.parks}, releases ${counts.releases}`,
  );
  console.log(`errors: ${errors.total}${errors.total ? `\n  ${errors.lines().join('\n  ')}` : ''}`);
  for (const f of snapshots) console.log(`heap snapshot: ${f}`);
  if (o.heapSnapshots)
    console.log(
      'with --heap-snapshots RSS is shown, not judged, and errors may be the snapshots’: a snapshot freezes a master for up to a minute on a busy machine',
    );
  console.log(
    `verdict: ${pass ? 'PASS' : 'FAIL'} (each judged series' last window ≤ ${GROWTH_LIMIT}× its first after warm-up, 0 errors)`,
  );
  await writeFile(
    `${outDir}/soak-report.json`,
    `${JSON.stringify({ options: o, tasks, counts, errors: errors.lines(), rows, snapshots, pass }, null, 2)}\n`,
  );
  return pass ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
