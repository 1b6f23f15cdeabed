/**
 * The reason rules of the device agreement (test/helpers/device-agreement.ts) are the product's data
 * checks' rules (engine/ingest/device-rules.ts), decided here from the FIT SDK's decode of the file.
 */
export { REASONS, type ReasonRule, runningSpans, TINY_SECONDS } from '../../engine/ingest/device-rules.ts';
export { reasonFor } from '../../engine/ingest/device-checks.ts';
