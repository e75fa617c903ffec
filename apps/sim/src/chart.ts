import { View, parse } from 'vega';
import { compile } from 'vega-lite';

/**
 * An SVG line chart of the healthy merge queue over time, cooldown off vs on, rendered with
 * vega-lite on the server (no browser, no canvas).
 */
export async function queueChartSvg(off: readonly number[], on: readonly number[]): Promise<string> {
  return lineChartSvg({
    title: 'Healthy stores queued for a WAL merge',
    x: 'simulated minutes',
    y: 'queued healthy merge tasks',
    off: off.map((depth, i) => ({ minute: i + 1, value: depth })),
    on: on.map((depth, i) => ({ minute: i + 1, value: depth })),
  });
}

/**
 * An SVG line chart of the broken stores' share of the workers' merge time in each 10-minute
 * sweep interval, cooldown off vs on.
 */
export async function workerChartSvg(off: readonly number[], on: readonly number[]): Promise<string> {
  return lineChartSvg({
    title: "Broken stores' share of the workers' merge time, per 10-minute sweep interval",
    x: 'simulated minutes',
    y: 'share of worker merge time',
    off: intervals(off),
    on: intervals(on),
    percent: true,
  });
}

/** One point per interval start, plus the last interval's end, so the step line spans the run. */
function intervals(shares: readonly number[]): { minute: number; value: number }[] {
  const points = shares.map((share, i) => ({ minute: i * 10, value: share }));
  const last = shares[shares.length - 1];
  return last === undefined ? points : [...points, { minute: shares.length * 10, value: last }];
}

interface LineChart {
  readonly title: string;
  readonly x: string;
  readonly y: string;
  readonly off: readonly { readonly minute: number; readonly value: number }[];
  readonly on: readonly { readonly minute: number; readonly value: number }[];
  readonly percent?: boolean;
}

async function lineChartSvg(c: LineChart): Promise<string> {
  const values = [
    ...c.off.map((p) => ({ ...p, run: 'cooldown off' })),
    ...c.on.map((p) => ({ ...p, run: 'cooldown on' })),
  ];
  const { spec } = compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: c.title,
    width: 720,
    height: 260,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'minute', type: 'quantitative', title: c.x },
      y: {
        field: 'value',
        type: 'quantitative',
        title: c.y,
        ...(c.percent ? { axis: { format: '.0%' }, scale: { domain: [0, 1] } } : {}),
      },
      color: { field: 'run', type: 'nominal', title: null },
    },
  });
  const view = new View(parse(spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
