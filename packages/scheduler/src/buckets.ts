/** Buckets of job-latency histograms (seconds), as the original master: a task's, a worker call's. */
export const JOB_BUCKETS = [0.5, 2, 10, 30, 120, 600, 1800];
