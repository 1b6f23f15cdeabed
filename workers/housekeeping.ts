import { UnrecoverableError, type Job } from 'bullmq';
import { z } from 'zod';
import type { Db } from '../db/database.ts';
import { deleteExpiredSessions } from '../db/sessions.ts';
import { deleteRetiredKeys, RETIRED_KEY_RETENTION_SECONDS } from '../db/signing-keys.ts';

/**
 * Periodic clean-up: expired web sessions, and signing keys retired long enough ago that no token
 * they signed can still be valid. Idempotent: running it twice deletes nothing more.
 */
export const HousekeepingJob = z.object({ task: z.literal('purge-expired') });
export type HousekeepingJob = z.infer<typeof HousekeepingJob>;
export interface HousekeepingResult {
  sessions: number;
  signingKeys: number;
}

export const HOUSEKEEPING_EVERY_MS = 60 * 60 * 1000;

export function housekeepingProcessor(deps: { db: Db; now: () => Date }) {
  return async (job: Job<HousekeepingJob>): Promise<HousekeepingResult> => {
    const data = HousekeepingJob.safeParse(job.data);
    if (!data.success) throw new UnrecoverableError(`invalid job data: ${data.error.message}`);
    const now = deps.now();
    const sessions = await deleteExpiredSessions(deps.db, now);
    const signingKeys = await deleteRetiredKeys(deps.db, new Date(now.getTime() - RETIRED_KEY_RETENTION_SECONDS * 1000));
    return { sessions, signingKeys };
  };
}
