/**
 * One half of `maintd-sim incident` (cooldown off or on) in a worker thread: the two halves share
 * nothing, so the command runs them side by side and a two-core machine takes the time of one.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type IncidentOptions, runIncident } from './incident.js';

if (!parentPort) throw new Error('incident-thread runs as a worker thread');
parentPort.postMessage(await runIncident(workerData as IncidentOptions));
