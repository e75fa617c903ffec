export { createExporterMetrics } from './metrics.js';
