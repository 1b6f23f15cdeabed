/**
 * ActivityDetails' `device_checks`: the data checks made at ingest (engine/ingest/device-checks.ts),
 * each with its rule's kind and one-line explanation (engine/ingest/device-rules.ts).
 */
import { z } from 'zod';
import { REASONS, ruleNamed } from '../../../engine/ingest/device-rules.ts';
import type { DeviceChecks } from '../../../engine/ingest/recording.ts';

export const DeviceCheckOut = z
  .object({
    agrees: z
      .boolean()
      .describe(
        "Ours is within 1 % of the device's value (normalized power 2 %), or within half the resolution the FIT profile stores it in",
      ),
    rule: z
      .string()
      .nullable()
      .describe(
        `When they differ, the named rule that explains it, decided from the file's own data: ${REASONS.map((r) => `\`${r.name}\``).join(', ')}; null when they agree, or when no rule explains the difference`,
      ),
    kind: z
      .enum(['convention', 'device-error'])
      .nullable()
      .describe("`convention`: the device counts another way and ours stands; `device-error`: the device's value contradicts its own data"),
    explanation: z.string().nullable().describe("The rule's one line"),
  })
  .meta({ id: 'DeviceCheck' });

export const DeviceChecksOut = z.record(z.string(), DeviceCheckOut).meta({
  id: 'DeviceChecks',
  description:
    'Per value of `device_summary` compared with ours (timer, elapsed, distance, average power, normalized power, average heart rate, average cadence, average speed, ascent), keyed by its FIT profile name: only those the file has.',
});

export function deviceChecksOut(checks: DeviceChecks | null): z.output<typeof DeviceChecksOut> | null {
  if (!checks) return null;
  return Object.fromEntries(
    Object.entries(checks).map(([field, check]) => {
      const rule = ruleNamed(check?.rule);
      return [
        field,
        { agrees: check?.agrees ?? false, rule: check?.rule ?? null, kind: rule?.kind ?? null, explanation: rule?.explanation ?? null },
      ];
    }),
  );
}
