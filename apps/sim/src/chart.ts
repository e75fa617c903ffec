import { View, parse } from 'vega';
import { compile } from 'vega-lite';

/**
 * An SVG line chart of the healthy merge queue over time, cooldown off vs on, rendered with
 * vega-lite on the server (no browser, no canvas).
 */
export async function queueChartSvg(off: readonly number[], on: readonly number[]): Promise<string> {
  const values = [
    ...off.map((depth, i) => ({ minute: i + 1, depth, run: 'cooldown off' })),
    ...on.map((depth, i) => ({ minute: i + 1, depth, run: 'cooldown on' })),
  ];
  const { spec } = compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Healthy stores queued for a WAL merge',
    width: 720,
    height: 260,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'minute', type: 'quantitative', title: 'simulated minutes' },
      y: { field: 'depth', type: 'quantitative', title: 'queued healthy merge tasks' },
      color: { field: 'run', type: 'nominal', title: null },
    },
  });
  const view = new View(parse(spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
