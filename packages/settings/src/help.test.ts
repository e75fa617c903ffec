import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EXIT_CODES_LINE, HELP_ENTRY, VERSION_ENTRY, formatHelp, versionText } from './help.js';
import { setting, settingsLoader, wholeNumber } from './settings.js';

describe('formatHelp', () => {
  it('lays out usage, about, sections of entries or lines, notes and the exit codes', () => {
    expect(
      formatHelp({
        program: 'tool',
        usage: ['[options]', 'run <what>'],
        about: ['Does things.'],
        sections: [
          {
            title: 'Options',
            entries: [
              HELP_ENTRY,
              VERSION_ENTRY,
              { term: '--port=<port>', tags: ['env PORT', 'default: 1'], description: ['Where.', 'Really.'] },
            ],
          },
          { title: 'Keys', lines: ['q quit'] },
        ],
        notes: ["Run 'tool run --help' for more."],
      }),
    ).toBe(
      [
        'Usage: tool [options]',
        '       tool run <what>',
        '',
        'Does things.',
        '',
        'Options:',
        '  -h, --help',
        '      Show this help and exit.',
        '  -V, --version',
        '      Print the version and exit.',
        '  --port=<port>  (env PORT; default: 1)',
        '      Where.',
        '      Really.',
        '',
        'Keys:',
        '  q quit',
        '',
        "Run 'tool run --help' for more.",
        '',
        EXIT_CODES_LINE,
        '',
      ].join('\n'),
    );
  });

  it('prints versions as "<program> <version>"', () => {
    expect(versionText('maintd', '1.2.3')).toBe('maintd 1.2.3\n');
  });
});

describe('settingsLoader', () => {
  const shape = {
    TOOL_PORT: setting(wholeNumber(1, 65535, 'port'), '80', { description: 'Where.', aliases: ['--port'] }),
  };
  const loader = settingsLoader({
    program: 'tool',
    usage: ['[options]'],
    about: ['Does things.'],
    shape,
    schema: z.object(shape),
    emptyDefaultText: 'empty',
  });

  it('answers --help and -h in the one layout, settings tagged with their env var and default', () => {
    const help = loader.load(['-h'], {});
    expect(help.action).toBe('help');
    const text = help.action === 'help' ? help.text : '';
    expect(text).toMatch(/^Usage: tool \[options\]\n\nDoes things\.\n\nOptions:\n {2}-h, --help\n/);
    expect(text).toContain(
      '\nSettings:\n  --tool-port=<port>, --port=<port>  (env TOOL_PORT; default: 80)\n      Where.\n',
    );
    expect(text.endsWith(`\n${EXIT_CODES_LINE}\n`)).toBe(true);
  });

  it('answers --version and -V, after --help and before any parse error', () => {
    expect(loader.load(['--version'], {})).toEqual({ action: 'version' });
    expect(loader.load(['-V', '--port=nope'], { TOOL_PORT: 'x' })).toEqual({ action: 'version' });
    expect(loader.load(['-V', '-h'], {}).action).toBe('help');
    expect(loader.load(['--version=1'], {}).action).toBe('error');
  });
});
