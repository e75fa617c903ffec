import { type Instance, render } from 'ink';
import { App, type AppProps } from './App.js';

/** Settings of {@link renderDashboard}: the App's props plus where Ink draws. */
export interface DashboardOptions extends AppProps {
  readonly stdout?: NodeJS.WriteStream;
  readonly stdin?: NodeJS.ReadStream;
  /** Ink's debug mode: every frame written in full, synchronously (benchmarks). */
  readonly debug?: boolean;
  /** Called after each frame Ink draws, with its render time. */
  readonly onRender?: (metrics: { renderTime: number }) => void;
  /** Frame-rate cap (default 20: at most one frame per 50 ms, however fast the data changes). */
  readonly maxFps?: number;
  /** Route console output around the frame (default true; off where the caller prints). */
  readonly patchConsole?: boolean;
}

/** Mounts the dashboard with Ink; `main` and the benchmark both start it here. */
export function renderDashboard(options: DashboardOptions): Instance {
  const { stdout, stdin, debug, onRender, maxFps, patchConsole, ...props } = options;
  return render(<App {...props} />, {
    ...(stdout ? { stdout } : {}),
    ...(stdin ? { stdin } : {}),
    ...(onRender ? { onRender } : {}),
    debug: debug ?? false,
    maxFps: maxFps ?? 20,
    // Not Ink's incrementalRendering: in Ink 6.8 it leaves stale and doubled lines on screen
    // (seen in tmux), so every frame is redrawn whole.
    // Ctrl+C goes through the App's quit path, so the feed stops and the screen is restored.
    exitOnCtrlC: false,
    patchConsole: patchConsole ?? true,
  });
}
