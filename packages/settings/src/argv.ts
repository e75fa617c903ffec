/** The command line as every maintd binary and tool reads it. */

/**
 * The arguments without a leading bare `--`: package-manager scripts (`pnpm start -- --flag`)
 * may pass one through, and no binary takes positional arguments that it could stand before.
 */
export function stripLeadingDashDash(argv: readonly string[]): string[] {
  return argv[0] === '--' ? argv.slice(1) : [...argv];
}
