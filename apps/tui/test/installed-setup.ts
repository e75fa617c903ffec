import type { TestProject } from 'vitest/node';
import { type InstalledTui, installPackedTui } from './installed.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `maintd-top` script of the dashboard as npm installs it from its tarball. */
    installedTuiBin: string;
  }
}

let installed: InstalledTui | undefined;

/**
 * The e2e tests' global setup: the dashboard they run is the published one, packed and installed
 * with npm once per run (test/installed.ts), not the workspace's build with its patched Ink.
 */
export async function setup(project: TestProject): Promise<void> {
  installed = await installPackedTui();
  project.provide('installedTuiBin', installed.bin);
}

export async function teardown(): Promise<void> {
  await installed?.remove();
}
