/**
 * The log output every maintd daemon shares: pino, as JSON lines or as pino-pretty's readable
 * lines (`LOG_FORMAT`), the message leading each line in both.
 */
import { format } from 'node:util';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { prettyFactory } from 'pino-pretty';

/** The colour functions pino-pretty hands a message formatter (no-ops when colour is off). */
export interface PrettyColors {
  readonly bold: (s: string) => string;
  readonly inverse: (s: string) => string;
  readonly magenta: (s: string) => string;
  readonly yellow: (s: string) => string;
  readonly red: (s: string) => string;
  readonly green: (s: string) => string;
  readonly gray: (s: string) => string;
}

/** How a daemon's own log lines read in the pretty format. */
export interface PrettyFormat {
  /** Fields the message already says (or that are noise on a terminal); hidden from every line. */
  readonly ignore?: readonly string[];
  /** The line's text from its fields; `undefined` = the plain message. */
  readonly message?: (log: Readonly<Record<string, unknown>>, colors: PrettyColors) => string | undefined;
}

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** A pino level, e.g. `info`. */
  readonly level: string;
  /** The resolved format (see {@link resolveLogFormat}). */
  readonly format: 'json' | 'pretty';
  /** Fields on every JSON line, e.g. `{ master_id }` (the pretty format leaves them out). */
  readonly base?: Readonly<Record<string, unknown>>;
  /** How the pretty format renders this daemon's lines. */
  readonly pretty?: PrettyFormat;
  /** Where lines go (default: stdout, written synchronously). */
  readonly destination?: DestinationStream;
  /** Colour in the pretty format (default: when the terminal supports it and NO_COLOR is unset). */
  readonly colorize?: boolean;
}

/**
 * A pino logger in the chosen format. Both formats write synchronously (no worker thread, no
 * buffered pipeline), so the last lines before `process.exit` are never lost. In JSON the
 * message comes right after the level, time and base fields, before an `err` and its stack,
 * so a fatal line reads from its cause, not from a stack trace.
 */
export function createLogger(o: CreateLoggerOptions): Logger {
  const destination = o.destination ?? pino.destination({ fd: 1, sync: true });
  const options: LoggerOptions = {
    level: o.level,
    base: o.base ? { ...o.base } : null,
    timestamp: pino.stdTimeFunctions.isoTime,
    // A cause is its own object, not its message glued onto the error's (gRPC's repeat themselves).
    serializers: { err: pino.stdSerializers.errWithCause },
    hooks: { logMethod: messageFirst },
  };
  if (o.format === 'json') return pino(options, destination);
  const base = Object.keys(o.base ?? {});
  const render = o.pretty?.message;
  const prettify = prettyFactory({
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: ['pid', 'hostname', ...base, ...(o.pretty?.ignore ?? [])].join(','),
    singleLine: true,
    ...(o.colorize === undefined ? {} : { colorize: o.colorize }),
    messageFormat: (log, messageKey, _level, { colors }) =>
      render?.(log, colors) ?? (typeof log[messageKey] === 'string' ? log[messageKey] : ''),
  });
  return pino(options, { write: (line: string) => destination.write(prettify(line)) });
}

/**
 * pino writes the message after every field; this hook makes it the first field of the logged
 * object instead (`logger.fatal({ err }, 'cannot …')` → `{"msg":"cannot …","err":{…}}`).
 */
function messageFirst(this: Logger, args: Parameters<Logger['info']>, method: Logger['info']): void {
  const [first, ...rest] = args as unknown[];
  if (first instanceof Error) {
    const msg = typeof rest[0] === 'string' ? text(rest) : first.message;
    return method.call(this, { msg, err: first });
  }
  if (first !== null && typeof first === 'object' && typeof rest[0] === 'string') {
    return method.call(this, { msg: text(rest), ...first });
  }
  return method.apply(this, args);
}

/** The message pino would have made of `msg, ...interpolation` (a lone message is taken as is). */
function text(rest: readonly unknown[]): string {
  return rest.length === 1 ? String(rest[0]) : format(...rest);
}
