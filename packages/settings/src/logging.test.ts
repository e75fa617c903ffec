import { describe, expect, it } from 'vitest';
import { resolveLogFormat } from './log-format.js';
import { createLogger } from './logging.js';

/** A destination that keeps what it is given. */
function capture(): { readonly lines: string[]; write(s: string): void } {
  const lines: string[] = [];
  return { lines, write: (s: string) => void lines.push(...s.split('\n').filter((l) => l !== '')) };
}

describe('resolveLogFormat', () => {
  it('is pretty on a terminal and JSON elsewhere unless told', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });
});

describe('createLogger, JSON', () => {
  it('puts the message before the error and its stack on a fatal line', () => {
    const out = capture();
    const log = createLogger({ level: 'info', format: 'json', base: { master_id: 'm1' }, destination: out });
    log.fatal({ err: new Error('connect ECONNREFUSED'), endpoints: ['http://e:2379'] }, 'cannot open the task store');
    const line = out.lines[0]!;
    expect(Object.keys(JSON.parse(line) as object)).toEqual(['level', 'time', 'master_id', 'msg', 'err', 'endpoints']);
    expect(JSON.parse(line)).toMatchObject({ level: 60, msg: 'cannot open the task store', master_id: 'm1' });
  });

  it('takes the message of a bare error, and leaves a lone message or interpolation as pino would', () => {
    const out = capture();
    const log = createLogger({ level: 'info', format: 'json', destination: out });
    log.error(new Error('boom'));
    log.info('plain 100%');
    log.warn({ n: 2 }, 'got %d tasks', 3);
    const [a, b, c] = out.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(a!)).toEqual(['level', 'time', 'msg', 'err']);
    expect(a).toMatchObject({ msg: 'boom', err: { message: 'boom' } });
    expect(b).toMatchObject({ msg: 'plain 100%' });
    expect(c).toMatchObject({ msg: 'got 3 tasks', n: 2 });
  });

  it('serialises a cause as its own object rather than repeating its message', () => {
    const out = capture();
    const log = createLogger({ level: 'info', format: 'json', destination: out });
    log.error({ err: new Error('etcd unavailable: x', { cause: new Error('14 UNAVAILABLE: x') }) }, 'failed');
    const { err } = JSON.parse(out.lines[0]!) as { err: { message: string; cause: { message: string } } };
    expect(err.message).toBe('etcd unavailable: x');
    expect(err.cause.message).toBe('14 UNAVAILABLE: x');
  });
});

describe('createLogger, pretty', () => {
  it('writes one line per entry: time, the level as a word, the message, the rest of the fields', () => {
    const out = capture();
    const log = createLogger({
      level: 'info',
      format: 'pretty',
      base: { master_id: 'm1' },
      colorize: false,
      destination: out,
    });
    log.info({ stores: 40 }, 'stats scan done');
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: stats scan done \{"stores":40\}$/);
    expect(out.lines[0]).not.toContain('m1');
  });

  it('renders lines through the daemon formatter, hiding the fields it says', () => {
    const out = capture();
    const log = createLogger({
      level: 'info',
      format: 'pretty',
      colorize: false,
      destination: out,
      pretty: {
        ignore: ['target'],
        message: (l, colors) => (l.msg === 'done' ? colors.bold(`${String(l.target)} done`) : undefined),
      },
    });
    log.info({ target: 's1' }, 'done');
    log.warn({ target: 's2' }, 'other');
    expect(out.lines).toEqual([expect.stringMatching(/ INFO: s1 done$/), expect.stringMatching(/ WARN: other$/)]);
  });

  it('leads a fatal line with its message, the stack below it', () => {
    const out = capture();
    const log = createLogger({ level: 'info', format: 'pretty', colorize: false, destination: out });
    log.fatal({ err: new Error('EADDRINUSE') }, 'cannot listen on 127.0.0.1:8090');
    expect(out.lines[0]).toMatch(/ FATAL: cannot listen on 127\.0\.0\.1:8090/);
    expect(out.lines.join('\n')).toContain('EADDRINUSE');
  });
});
