export { type FleetStub, type StubStore, startFleetStub } from './fleet-stub.js';
export {
  type DeepPartial,
  type TestScheduler,
  type TestStore,
  type TestStoreOptions,
  openScheduler,
  openTestStore,
  testConfig,
} from './harness.js';
export { type StubReply, type StubRequest, type StubWorker, refusedUrl, startStubWorker } from './stub-worker.js';
