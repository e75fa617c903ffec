/**
 * The `maintd-sim` command line: its commands, their options (each declared once, for parsing and
 * for `--help`), and the help pages, in the layout every maintd binary shares.
 */
import { parseArgs } from 'node:util';
import { HELP_ENTRY, type HelpEntry, VERSION_ENTRY, formatHelp, stripLeadingDashDash } from '@maintd/settings';

/** A bad command line: exit code 2, with a pointer to the help (of `command`, when known). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** One option of a command. */
interface OptionSpec {
  readonly name: string;
  /** The value's placeholder; every option of the simulator takes a value. */
  readonly placeholder: string;
  /** The default as the help shows it; absent = none. */
  readonly default?: string;
  readonly description: string | readonly string[];
}

/** A command of `maintd-sim`. */
interface CommandSpec {
  readonly usage: string;
  readonly summary: string;
  readonly about: readonly string[];
  readonly options: readonly OptionSpec[];
}

/** The commands, in the order `--help` lists them. */
export const COMMANDS = {
  workers: {
    usage: '[--workers=3] [--stores=40] [--broken=3] [--seed=1] [--port=0] [options]',
    summary: 'Real HTTP workers on loopback over simulated stores (what `pnpm demo` runs).',
    about: [
      'Real HTTP workers on loopback speaking the worker protocol over simulated stores. Prints',
      'WORKER_ENDPOINTS=... once they listen, and runs until SIGINT or SIGTERM.',
    ],
    options: [
      { name: 'workers', placeholder: 'n', default: '3', description: 'Workers (at least 1).' },
      { name: 'stores', placeholder: 'n', default: '40', description: 'Stores in the fleet (at least 1).' },
      { name: 'broken', placeholder: 'n', default: '3', description: 'Broken stores among them.' },
      {
        name: 'seed',
        placeholder: 'n',
        default: '1',
        description: 'Which stores are broken, their owners, growth rates and backlogs.',
      },
      { name: 'host', placeholder: 'host', default: '127.0.0.1', description: 'Address to listen on.' },
      {
        name: 'port',
        placeholder: 'port',
        default: '0',
        description: 'Worker i listens on port+i; 0 = free ports chosen by the system.',
      },
      { name: 'latency-ms', placeholder: 'ms', default: '0', description: 'Extra latency of every call.' },
      {
        name: 'merge-latency-ms',
        placeholder: 'ms',
        default: '200',
        description: 'Base latency of a healthy merge on one worker.',
      },
      {
        name: 'merge-ms-per-generation',
        placeholder: 'ms',
        default: '2',
        description: 'Added per generation a merge reclaims.',
      },
      {
        name: 'broken-latency-ms',
        placeholder: 'ms',
        default: '1500',
        description: 'How long a broken store takes to fail.',
      },
      {
        name: 'merge-concurrency',
        placeholder: 'n',
        default: '0',
        description: 'Merges each worker runs at a time, queueing the rest; 0 = no limit.',
      },
      {
        name: 'flaky-worker',
        placeholder: 'i',
        description: 'Worker i (0-based) answers per-store calls with 503 at --flaky-rate.',
      },
      { name: 'flaky-rate', placeholder: 'fraction', default: '0.3', description: 'See --flaky-worker.' },
      {
        name: 'hang-worker',
        placeholder: 'i',
        description: 'Worker i never answers per-store calls (its store listing still answers): for timeouts.',
      },
    ],
  },
  incident: {
    usage: '[--masters=6] [--stores=200] [--broken=5] [--hours=6] [--seed=1] [--chart=FILE.svg] [options]',
    summary: 'The deterministic incident reproduction, cooldown off vs on.',
    about: [
      'The deterministic incident reproduction: the real master scheduler, in process, on a fake',
      'clock, with the cooldown off and then on. Prints the comparison tables.',
    ],
    options: [
      { name: 'masters', placeholder: 'n', default: '6', description: 'Masters (at least 1).' },
      { name: 'stores', placeholder: 'n', default: '200', description: 'Stores in the fleet (at least 1).' },
      { name: 'broken', placeholder: 'n', default: '5', description: 'Broken stores among them.' },
      { name: 'hours', placeholder: 'n', default: '6', description: 'Simulated hours (at least 1).' },
      { name: 'seed', placeholder: 'n', default: '1', description: 'The fleet and its randomness.' },
      { name: 'chart', placeholder: 'file.svg', description: 'Draw the healthy merge queue over time.' },
      {
        name: 'worker-chart',
        placeholder: 'file.svg',
        description: "Draw the broken stores' share of the workers' merge time.",
      },
    ],
  },
} as const satisfies Record<string, CommandSpec>;

/** A command's name. */
export type Command = keyof typeof COMMANDS;

const isCommand = (s: string): s is Command => Object.hasOwn(COMMANDS, s);

/** `maintd-sim --help`. */
export const HELP: string = formatHelp({
  program: 'maintd-sim',
  usage: ['<command> [options]'],
  about: ['Simulated maintd workers, and the incident reproduction on the real scheduler.'],
  sections: [
    {
      title: 'Commands',
      entries: Object.entries(COMMANDS).map(([name, c]): HelpEntry => ({ term: name, description: c.summary })),
    },
    { title: 'Options', entries: [HELP_ENTRY, VERSION_ENTRY] },
  ],
  notes: ["Run 'maintd-sim <command> --help' for a command's options."],
});

/** `maintd-sim <command> --help`. */
export function commandHelp(command: Command): string {
  const c: CommandSpec = COMMANDS[command];
  return formatHelp({
    program: `maintd-sim ${command}`,
    usage: [c.usage],
    about: c.about,
    sections: [
      {
        title: 'Options',
        entries: [
          HELP_ENTRY,
          VERSION_ENTRY,
          ...c.options.map((o): HelpEntry => ({
            term: `--${o.name}=<${o.placeholder}>`,
            ...(o.default === undefined ? {} : { tags: [`default: ${o.default}`] }),
            description: o.description,
          })),
        ],
      },
    ],
  });
}

/** What a command line asks for. */
export type CliResult =
  | { readonly action: 'help'; readonly text: string }
  | { readonly action: 'version' }
  | { readonly action: 'run'; readonly command: Command; readonly values: Readonly<Record<string, string>> };

/**
 * Parses `maintd-sim [<command>] [options]`. `--help`/`-h` wins, then `--version`/`-V`; a bad
 * command line throws a {@link UsageError}. Values are checked by the command that reads them.
 */
export function parseCli(argv: readonly string[]): CliResult {
  const [first, ...rest] = stripLeadingDashDash(argv);
  if (first === undefined) throw new UsageError('a command is required: workers or incident');
  if (first === '--help' || first === '-h') return { action: 'help', text: HELP };
  if (first === '--version' || first === '-V') return { action: 'version' };
  if (!isCommand(first)) {
    throw new UsageError(
      first.startsWith('-')
        ? `unknown option '${first}' (a command comes first: workers or incident)`
        : `unknown command '${first}' (workers or incident)`,
    );
  }
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'V' },
  };
  for (const o of COMMANDS[first].options as readonly OptionSpec[]) options[o.name] = { type: 'string' };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: rest, options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message, first);
  }
  if (values.help) return { action: 'help', text: commandHelp(first) };
  if (values.version) return { action: 'version' };
  const strings = Object.fromEntries(
    Object.entries(values).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  return { action: 'run', command: first, values: strings };
}
