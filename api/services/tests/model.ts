import { z } from 'zod';
import type { TestFields } from '../../../db/tests.ts';
import { SportParam } from '../activities/query.ts';
import { InstantWithOffset } from '../traces/model.ts';
import { TestResults } from '../resources/tests.ts';

/**
 * Test requests (TestCreateOrUpdate: the same body creates and replaces). `start` and `end` need
 * their UTC offset; `end` defaults to `start` + 3 h (on the start's clock) and may not be before
 * `start`. A replace sets what the body omits to null (tags empty, end start + 3 h).
 */

/** The most traces one test links by `test_id` (a step test has tens; a linked trace beyond it is 422). */
export const MAX_TRACES_PER_TEST = 1000;

/** How long a test lasts when the client gives no end. */
export const DEFAULT_TEST_HOURS = 3;

export const TestCreateOrUpdate = z
  .object({
    title: z.string().max(200).nullish(),
    sport: SportParam.describe('OpenSportTaxonomy (legacy names are normalised)'),
    start: InstantWithOffset.meta({
      description: 'ISO 8601 instant with a UTC offset; a naive date-time is 422',
      example: '2026-05-01T09:00:00+02:00',
    }),
    end: InstantWithOffset.nullish().meta({
      description: `ISO 8601 instant with a UTC offset, not before \`start\`; default \`start\` + ${DEFAULT_TEST_HOURS} h`,
    }),
    results: TestResults.nullish(),
    tags: z.array(z.string().min(1).max(64)).max(50).nullish().describe('At most 50 tags of 1–64 characters; duplicates are dropped'),
  })
  .superRefine((body, ctx) => {
    if (body.end && body.end.time < body.start.time)
      ctx.addIssue({ code: 'custom', path: ['end'], message: 'is before start', params: { type: 'value_error.end_before_start' } });
  })
  .meta({ id: 'TestCreateOrUpdate' });

/** The stored fields of a request body: omitted fields are null, `end` start + 3 h. */
export function testFields(body: z.output<typeof TestCreateOrUpdate>): TestFields {
  const end = body.end ?? {
    time: new Date(body.start.time.getTime() + DEFAULT_TEST_HOURS * 3_600_000),
    offsetSeconds: body.start.offsetSeconds,
  };
  return {
    sport: body.sport,
    start_time: body.start.time,
    utc_offset_seconds: body.start.offsetSeconds,
    end_time: end.time,
    end_utc_offset_seconds: end.offsetSeconds,
    title: body.title ?? null,
    tags: [...new Set(body.tags ?? [])],
    results: body.results ?? null,
  };
}
