/**
 * The one command-line style of the maintd binaries (`maintd`, `maintd-exporter`, `maintd-top`,
 * `maintd-sim` and its commands): the same `--help` layout, `--version`/`-V` printing
 * `<program> <version>`, and the same exit codes, documented at the foot of every help page.
 */

/** Exit codes every binary uses. */
export const EXIT = {
  /** Done: a clean run, `--help`, `--version`, or a shutdown after SIGTERM/SIGINT. */
  ok: 0,
  /** A runtime failure: the port is taken, the store failed, shutdown failed. */
  failure: 1,
  /** Usage or configuration: a bad flag or value, or a configuration that can never work. */
  usage: 2,
} as const;

/** The last line of every help page. */
export const EXIT_CODES_LINE = 'Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.';

/** One option (or command) of a help page. */
export interface HelpEntry {
  /** What to type, e.g. `--port=<port>` or `-h, --help`. */
  readonly term: string;
  /** Shown in parentheses after the term, e.g. `env MASTER_PORT`, `default: 8090`. */
  readonly tags?: readonly string[];
  /** One line or several. */
  readonly description: string | readonly string[];
}

/** A titled block of a help page: entries, or plain lines (e.g. the dashboard's keys). */
export interface HelpSection {
  /** E.g. `Options`, `Settings`, `Commands`, `Keys`. */
  readonly title: string;
  readonly entries?: readonly HelpEntry[];
  readonly lines?: readonly string[];
}

/** A whole help page. */
export interface HelpPage {
  /** The program (and command), e.g. `maintd-sim workers`. */
  readonly program: string;
  /** What follows the program on each usage line, e.g. `[options]`. */
  readonly usage: readonly string[];
  /** What the program does: a paragraph, one string per line. */
  readonly about: readonly string[];
  readonly sections: readonly HelpSection[];
  /** Lines after the sections, before the exit codes (e.g. where to read more). */
  readonly notes?: readonly string[];
}

/** `-h, --help`, as every page lists it. */
export const HELP_ENTRY: HelpEntry = { term: '-h, --help', description: 'Show this help and exit.' };
/** `-V, --version`, as every page lists it. */
export const VERSION_ENTRY: HelpEntry = { term: '-V, --version', description: 'Print the version and exit.' };

/**
 * Renders a help page in the one layout: `Usage:` lines, the about paragraph, each section as
 * `Title:` with entries indented two spaces and their descriptions six, then the notes and the
 * exit codes. Entries keep their tags on the term's line, `(env X; default: Y)`, where tools
 * (and the deploy tests) find them.
 */
export function formatHelp(page: HelpPage): string {
  const [first, ...more] = page.usage;
  const lines = [
    `Usage: ${page.program}${first ? ` ${first}` : ''}`,
    ...more.map((u) => `       ${page.program} ${u}`),
    '',
    ...page.about,
  ];
  for (const section of page.sections) {
    lines.push('', `${section.title}:`);
    for (const e of section.entries ?? []) {
      const tags = e.tags && e.tags.length > 0 ? `  (${e.tags.join('; ')})` : '';
      lines.push(`  ${e.term}${tags}`);
      for (const d of typeof e.description === 'string' ? [e.description] : e.description) lines.push(`      ${d}`);
    }
    for (const l of section.lines ?? []) lines.push(l === '' ? '' : `  ${l}`);
  }
  if (page.notes && page.notes.length > 0) lines.push('', ...page.notes);
  lines.push('', EXIT_CODES_LINE);
  return `${lines.join('\n')}\n`;
}

/** What `--version` prints: `<program> <version>`. */
export function versionText(program: string, version: string): string {
  return `${program} ${version}\n`;
}
