/** Whether a binary writes to a terminal: known only at the process's edge. */

/**
 * Whether stdout is a terminal: `LOG_FORMAT=auto` is pretty there and JSON anywhere else, a
 * closed terminal's SIGHUP stops a daemon, and colour is on.
 */
export function stdoutIsTty(stdout: { readonly isTTY?: boolean } = process.stdout): boolean {
  return stdout.isTTY === true;
}
