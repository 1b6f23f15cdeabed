/**
 * Synthetic FIT files for tests, written with Garmin's own encoder (@garmin/fitsdk), so they are
 * valid FIT (header, definitions, CRC) whatever our parser thinks.
 *
 * Values are given as fitsdk's decoder returns them: field names in camelCase, enums as camelCase
 * strings (`'indoorCycling'`), physical units with scale/offset applied (m/s, m, °C), positions in
 * semicircles, instants as Dates. `localTimestamp` is a number (FIT local_date_time seconds).
 */
import { Encoder, Profile, Utils, type Mesg, type RecordMesg } from '@garmin/fitsdk';

/** A message for the encoder: `mesgNum` plus fields. */
export type FitMessage = Mesg & { mesgNum: number } & Record<string, unknown>;

export const MesgNum = Profile.MesgNum as Record<
  'FILE_ID' | 'DEVICE_INFO' | 'EVENT' | 'RECORD' | 'LAP' | 'SESSION' | 'ACTIVITY' | 'USER_PROFILE' | 'MONITORING' | 'DEVELOPER_DATA_ID' | 'FIELD_DESCRIPTION' | 'SPORT',
  number
>;

/** Degrees → FIT semicircles. */
export const semicircles = (degrees: number) => Math.round((degrees * 2 ** 31) / 180);

/** A JavaScript Date → FIT date_time seconds (since 1989-12-31T00:00:00Z). */
export const fitSeconds = (date: Date) => Utils.convertDateToDateTime(date);

/** Encode messages, in order, as one FIT file. */
export function encodeFit(messages: FitMessage[]): Uint8Array {
  const encoder = new Encoder();
  for (const message of messages) encoder.writeMesg(message as Parameters<Encoder['writeMesg']>[0]);
  return encoder.close();
}

/** Fields of a record message (fitsdk names and units), without timestamp or message number. */
export type RecordFields = Omit<RecordMesg, 'mesgNum' | 'timestamp' | 'developerFields'>;

export interface DeveloperFieldSpec {
  /** The field_description's field_name, e.g. `core_temperature` or `SmO2`. */
  name: string;
  units?: string;
  /** fit_base_type_id written in the field description; default 0x88 (float32, as devices write it). */
  baseType?: number;
  /** Value of the i-th record (undefined: the field is absent from it). */
  value: (i: number) => number | undefined;
}

export interface SessionSpec {
  /** FIT sport / sub-sport as fitsdk names them (`'cycling'`, `'indoorCycling'`). */
  sport: string;
  subSport?: string;
  start: Date;
  /** Records at 1 Hz from start, and the session's total elapsed time (s) unless `elapsed` is given. */
  seconds: number;
  elapsed?: number;
  /** Laps of equal length covering the session (default 1; 0 writes none). */
  laps?: number;
  /** Fields of the i-th record (at start + i s); default: power, heart rate, cadence, speed, distance. */
  record?: (i: number) => RecordFields;
  /** Developer fields on the session's records. */
  developerFields?: DeveloperFieldSpec[];
}

export interface ActivitySpec {
  sessions: SessionSpec[];
  /** Written as the activity's local_timestamp − timestamp; no local_timestamp when undefined. */
  utcOffsetSeconds?: number;
  /** file_id creator; default Garmin Edge 830 (product 3122). */
  manufacturer?: string;
  product?: number;
  productName?: string;
  /** Extra device_info messages (sensors). */
  devices?: Record<string, unknown>[];
}

export const defaultRecord = (i: number): RecordFields => ({
  power: 200 + (i % 50),
  heartRate: 120 + (i % 30),
  cadence: 85 + (i % 10),
  speed: 8 + (i % 7) / 10,
  distance: i * 8,
});

/**
 * An activity file: file_id, device_info, developer field descriptions, then per session a start
 * event, its records, laps and the session message; finally a stop event and the activity message.
 * Sessions are written in order; records of consecutive sessions must not overlap in time.
 */
export function buildActivityFit(spec: ActivitySpec): Uint8Array {
  const first = spec.sessions[0]?.start ?? new Date('2024-01-01T00:00:00Z');
  const messages: FitMessage[] = [
    {
      mesgNum: MesgNum.FILE_ID,
      type: 'activity',
      manufacturer: spec.manufacturer ?? 'garmin',
      product: spec.product ?? 3122,
      ...(spec.productName ? { productName: spec.productName } : {}),
      serialNumber: 1234567890,
      timeCreated: first,
    },
    { mesgNum: MesgNum.DEVICE_INFO, timestamp: first, deviceIndex: 'creator', manufacturer: spec.manufacturer ?? 'garmin', product: spec.product ?? 3122, sourceType: 'local' },
    ...(spec.devices ?? []).map((d) => ({ mesgNum: MesgNum.DEVICE_INFO, timestamp: first, ...d })),
  ];

  // Developer fields: one developer data id, a field description per distinct name.
  const developerKeys = new Map<string, number>();
  const encoder = new Encoder();
  for (const session of spec.sessions) {
    for (const field of session.developerFields ?? []) {
      if (developerKeys.has(field.name)) continue;
      const key = developerKeys.size;
      developerKeys.set(field.name, key);
      const developerDataIdMesg = { mesgNum: MesgNum.DEVELOPER_DATA_ID, developerDataIndex: 0, applicationId: Array.from({ length: 16 }, (_, i) => i + 1), applicationVersion: 1 };
      const fieldDescriptionMesg = {
        mesgNum: MesgNum.FIELD_DESCRIPTION,
        developerDataIndex: 0,
        fieldDefinitionNumber: key,
        fitBaseTypeId: field.baseType ?? 0x88, // the encoder needs a number; Utils.FitBaseType.FLOAT32 (8) lacks the endian bit
        fieldName: field.name,
        units: field.units ?? '',
        nativeMesgNum: 'record',
      };
      if (key === 0) messages.push(developerDataIdMesg);
      messages.push(fieldDescriptionMesg);
      encoder.addDeveloperField(key, developerDataIdMesg as never, fieldDescriptionMesg as never);
    }
  }

  let last = first;
  for (const [index, session] of spec.sessions.entries()) {
    const at = (s: number) => new Date(session.start.getTime() + s * 1000);
    const elapsed = session.elapsed ?? session.seconds;
    messages.push({ mesgNum: MesgNum.EVENT, timestamp: session.start, event: 'timer', eventType: 'start' });
    for (let i = 0; i < session.seconds; i++) {
      const developerFields: Record<number, number> = {};
      for (const field of session.developerFields ?? []) {
        const v = field.value(i);
        if (v !== undefined) developerFields[developerKeys.get(field.name)!] = v;
      }
      messages.push({
        ...(session.record ?? defaultRecord)(i),
        mesgNum: MesgNum.RECORD,
        timestamp: at(i),
        ...(Object.keys(developerFields).length > 0 ? { developerFields } : {}),
      });
    }
    const lapCount = session.laps ?? 1;
    for (let l = 0; l < lapCount; l++) {
      const lapStart = (elapsed * l) / lapCount;
      const lapElapsed = elapsed / lapCount;
      messages.push({
        mesgNum: MesgNum.LAP,
        messageIndex: l,
        timestamp: at(lapStart + lapElapsed),
        startTime: at(lapStart),
        totalElapsedTime: lapElapsed,
        totalTimerTime: lapElapsed,
        event: 'lap',
        eventType: 'stop',
      });
    }
    messages.push({
      mesgNum: MesgNum.SESSION,
      messageIndex: index,
      timestamp: at(elapsed),
      startTime: session.start,
      totalElapsedTime: elapsed,
      totalTimerTime: elapsed,
      sport: session.sport,
      ...(session.subSport ? { subSport: session.subSport } : {}),
      numLaps: lapCount,
      event: 'session',
      eventType: 'stop',
    });
    last = at(elapsed);
  }
  messages.push({ mesgNum: MesgNum.EVENT, timestamp: last, event: 'timer', eventType: 'stopAll' });
  messages.push({
    mesgNum: MesgNum.ACTIVITY,
    timestamp: last,
    numSessions: spec.sessions.length,
    type: spec.sessions.length > 1 ? 'autoMultiSport' : 'manual',
    event: 'activity',
    eventType: 'stop',
    ...(spec.utcOffsetSeconds === undefined ? {} : { localTimestamp: fitSeconds(last) + spec.utcOffsetSeconds }),
  });
  for (const message of messages) encoder.writeMesg(message as Parameters<Encoder['writeMesg']>[0]);
  return encoder.close();
}

/** A valid FIT settings file (file_id + user_profile): no activity in it. */
export function buildSettingsFit(): Uint8Array {
  return encodeFit([
    { mesgNum: MesgNum.FILE_ID, type: 'settings', manufacturer: 'garmin', product: 3122, serialNumber: 1, timeCreated: new Date('2024-01-01T00:00:00Z') },
    { mesgNum: MesgNum.USER_PROFILE, friendlyName: 'Test', weight: 70, gender: 'female', age: 40 },
  ]);
}

/** A valid FIT monitoring file (daily steps/heart rate): no activity in it. */
export function buildMonitoringFit(): Uint8Array {
  const start = new Date('2024-01-01T00:00:00Z');
  const messages: FitMessage[] = [{ mesgNum: MesgNum.FILE_ID, type: 'monitoringB', manufacturer: 'garmin', product: 3122, serialNumber: 1, timeCreated: start }];
  for (let i = 0; i < 10; i++) {
    messages.push({ mesgNum: MesgNum.MONITORING, timestamp: new Date(start.getTime() + i * 60_000), heartRate: 60 + i, activityType: 'walking', cycles: i * 10 });
  }
  return encodeFit(messages);
}
