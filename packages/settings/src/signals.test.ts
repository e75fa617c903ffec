import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { type StopSignal, handleStopSignals } from './signals.js';

function wire(terminal: boolean, shutdown: () => Promise<void> = () => Promise.resolve()) {
  const proc = Object.assign(new EventEmitter(), { exit: vi.fn() });
  const stops: StopSignal[] = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  handleStopSignals({
    program: 'maintd',
    logger: { warn: (_fields, message) => warnings.push(message), error: (_fields, message) => errors.push(message) },
    terminal,
    shutdown: (signal) => {
      stops.push(signal);
      return shutdown();
    },
    process: proc as unknown as Pick<NodeJS.Process, 'on' | 'once' | 'exit'>,
  });
  return { proc, stops, warnings, errors };
}

describe('handleStopSignals', () => {
  it('exits 1 and logs why when the shutdown fails', async () => {
    const { proc, errors } = wire(false, () => Promise.reject(new Error('etcd gone')));
    proc.emit('SIGINT');
    await vi.waitFor(() => expect(proc.exit).toHaveBeenCalledWith(1));
    expect(errors).toEqual(['shutdown failed']);
  });

  it('stops on SIGTERM, exits 0, and leaves a second SIGTERM to Node, which ends the process at once', async () => {
    const { proc, stops } = wire(false);
    proc.emit('SIGTERM');
    expect(stops).toEqual(['SIGTERM']);
    await vi.waitFor(() => expect(proc.exit).toHaveBeenCalledWith(0));
    expect(proc.listenerCount('SIGTERM')).toBe(0);
    expect(proc.listenerCount('SIGINT')).toBe(1);
  });

  it('keeps a daemon running on SIGHUP, every time, saying how to apply new settings', () => {
    const { proc, stops, warnings } = wire(false);
    proc.emit('SIGHUP');
    proc.emit('SIGHUP');
    expect(stops).toEqual([]);
    expect(warnings).toEqual([
      'SIGHUP ignored: maintd reads its settings only when it starts; restart it to apply changes (systemctl restart maintd)',
      'SIGHUP ignored: maintd reads its settings only when it starts; restart it to apply changes (systemctl restart maintd)',
    ]);
    proc.emit('SIGINT');
    expect(stops).toEqual(['SIGINT']);
  });

  it('stops on SIGHUP when its output is a terminal, which has gone away', () => {
    const { proc, stops, warnings } = wire(true);
    proc.emit('SIGHUP');
    expect(stops).toEqual(['SIGHUP']);
    expect(warnings).toEqual([]);
  });
});
