import type {} from 'vitest';
import { startEtcd } from '@maintd/core/testing';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    etcdEndpoints: string[];
  }
}

/** Starts one etcd for the whole run, unless ETCD_ENDPOINTS points at one already. */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
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
