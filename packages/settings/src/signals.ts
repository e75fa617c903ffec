/**
 * The signals a maintd daemon stops on, wired once for every binary.
 *
 * SIGINT and SIGTERM stop it. SIGHUP means one of two things: the terminal a daemon runs in went
 * away (its output is a terminal), and it stops as on SIGINT; or somebody sent it by hand, as
 * Prometheus reloads its configuration on SIGHUP. maintd reads its settings once, at start, so it
 * says so and keeps running: Node's default would kill it on the spot, with no graceful shutdown,
 * and systemd counts a death by SIGHUP as a clean exit that `Restart=on-failure` does not restart.
 */
import { EXIT } from './help.js';

/** The signals {@link handleStopSignals} stops on. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** What {@link handleStopSignals} needs. */
export interface StopSignalsOptions {
  /** The binary's name, as its log lines name it. */
  readonly program: string;
  /** Where an ignored SIGHUP and a failed shutdown are reported. */
  readonly logger: { warn(fields: object, message: string): void; error(fields: object, message: string): void };
  /** Whether the daemon's output is a terminal (`process.stdout.isTTY`): then SIGHUP stops it. */
  readonly terminal: boolean;
  /**
   * The graceful shutdown (called again if a second, different signal arrives): the process exits
   * 0 when it resolves, 1 when it rejects.
   */
  readonly shutdown: (signal: StopSignal) => Promise<void>;
  /** The process whose signals are handled and which exits (tests pass an EventEmitter). */
  readonly process?: Pick<NodeJS.Process, 'on' | 'once' | 'exit'>;
}

/**
 * Handles SIGINT, SIGTERM and SIGHUP as the module comment says. SIGINT and SIGTERM are handled
 * once each: a second one during the graceful shutdown falls to Node's default and ends the
 * process at once (the documented way out of a long grace period).
 */
export function handleStopSignals(o: StopSignalsOptions): void {
  const proc = o.process ?? process;
  const stop = (signal: StopSignal): void => {
    o.shutdown(signal).then(
      () => proc.exit(EXIT.ok),
      (err: unknown) => {
        o.logger.error({ err }, 'shutdown failed');
        proc.exit(EXIT.failure);
      },
    );
  };
  proc.once('SIGINT', () => stop('SIGINT'));
  proc.once('SIGTERM', () => stop('SIGTERM'));
  // `on`, not `once`: a second SIGHUP must not fall to Node's default, which kills.
  proc.on('SIGHUP', () => {
    if (o.terminal) return stop('SIGHUP');
    o.logger.warn(
      { signal: 'SIGHUP' },
      `SIGHUP ignored: ${o.program} reads its settings only when it starts; restart it to apply changes (systemctl restart ${o.program})`,
    );
  });
}
