import type { TestProject } from 'vitest/node';
import { startEtcd } from './etcd-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Client URLs of the etcd the run's tests share (`inject('etcdEndpoints')`). */
    etcdEndpoints: string[];
  }
}

/**
 * A vitest `globalSetup` that starts one throwaway etcd for the whole run, unless
 * `ETCD_ENDPOINTS` (comma-separated) names one already, and provides its URLs as
 * `inject('etcdEndpoints')`. Re-export it as `setup` from a package's global-setup file.
 */
export async function etcdGlobalSetup(project: TestProject): Promise<() => Promise<void>> {
  const given =
    process.env.ETCD_ENDPOINTS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean) ?? [];
  if (given.length > 0) {
    project.provide('etcdEndpoints', given);
    return () => Promise.resolve();
  }
  const etcd = await startEtcd();
  project.provide('etcdEndpoints', [etcd.clientUrl]);
  return async () => {
    await etcd.stop();
  };
}
