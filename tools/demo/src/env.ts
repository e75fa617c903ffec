/**
 * The demo launcher's edge: the only module that reads `process.env` (and whether stdout is a
 * terminal); the rest receives what it needs.
 */
import { stdoutIsTty } from '@maintd/settings';

/** What the launcher reads from its environment. */
export interface DemoEnv {
  /** `MASTER_PORT`, as the master itself reads it: the port when `--port` is not given. */
  readonly masterPort: string | undefined;
  /** Whether the children's logs may be coloured: stdout is a terminal and `NO_COLOR` is unset. */
  readonly color: boolean;
  /** The environment the children inherit. */
  readonly inherited: Readonly<Record<string, string | undefined>>;
}

/** This process's {@link DemoEnv}. */
export function readDemoEnv(): DemoEnv {
  const env = process.env;
  return {
    masterPort: env.MASTER_PORT === '' ? undefined : env.MASTER_PORT,
    color: stdoutIsTty() && env.NO_COLOR === undefined,
    inherited: env,
  };
}
