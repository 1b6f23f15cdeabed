/**
 * The data checks: each of the device's own session values (a FIT session message, a TCX file's
 * lap totals) beside ours, and for each that differs the rule that says why (./device-rules.ts),
 * decided at ingest from the file's own data (its timer events, its records, the session's other
 * values) and ours, never from the file's name. A value agrees when it is within TOLERANCE of the
 * device's (1 %, NP 2 %) or within half the resolution the FIT profile stores it in (its own
 * rounding: an average heart rate is a whole bpm, so 107.4 against 107 agrees).
 *
 * The same rules and facts serve `npm run bench -- device`, which reads the facts from the FIT SDK's
 * decode of the file instead of ours.
 */
import type { DeviceChecks } from './recording.ts';
import { agrees, DEVICE_FIELD, type DeviceSession, type Ours, type Quantity, QUANTITIES } from './device-facts.ts';
import { REASONS, type ReasonRule } from './device-rules.ts';

/** The first rule that explains a disagreement of `quantity` in this session, or undefined. */
export function reasonFor(
  session: DeviceSession,
  ours: Ours | undefined,
  quantity: Quantity,
  rules: readonly ReasonRule[] = REASONS,
): ReasonRule | undefined {
  return rules.find((r) => r.quantities.includes(quantity) && r.fires(session, ours, quantity));
}

/** Each value the device has, checked against ours: agreeing, or the rule that explains the difference. */
export function checkDevice(session: DeviceSession, ours: Ours | undefined, rules: readonly ReasonRule[] = REASONS): DeviceChecks {
  const checks: DeviceChecks = {};
  for (const quantity of QUANTITIES) {
    const device = session.values[quantity];
    if (device === undefined) continue;
    const ok = agrees(quantity, device, ours?.values[quantity], session.resolution[quantity]);
    const rule = ok ? undefined : reasonFor(session, ours, quantity, rules)?.name;
    checks[DEVICE_FIELD[quantity]] = { agrees: ok, ...(rule ? { rule } : {}) };
  }
  return checks;
}
