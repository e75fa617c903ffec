/** The `LOG_FORMAT` setting the daemons share (their loggers are in `logging.ts`). */
import { type ValueType, oneOf } from './settings.js';

/** `LOG_FORMAT` values: `auto` is pretty on a terminal and JSON otherwise (a pipe, the journal). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
/** A `LOG_FORMAT` value. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The value type of a `LOG_FORMAT` setting. */
export const logFormat: ValueType<LogFormat> = oneOf(LOG_FORMATS, 'format');

/** Resolves `auto` against whether stdout is a terminal (known only at the process's edge). */
export function resolveLogFormat(value: LogFormat, stdoutIsTty: boolean): 'json' | 'pretty' {
  return value === 'auto' ? (stdoutIsTty ? 'pretty' : 'json') : value;
}
