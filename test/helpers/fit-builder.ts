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
  | 'FILE_ID'
  | 'DEVICE_INFO'
  | 'EVENT'
  | 'RECORD'
  | 'LAP'
  | 'SESSION'
  | 'ACTIVITY'
  | 'USER_PROFILE'
  | 'MONITORING'
  | 'DEVELOPER_DATA_ID'
  | 'FIELD_DESCRIPTION'
  | 'SPORT'
  | 'LENGTH',
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
  /** native_mesg_num: default `'record'` (20); null writes none. */
  nativeMesgNum?: string | number | null;
  /** native_field_num (the record field the developer field stands for, e.g. 7 power); none when undefined. */
  nativeFieldNum?: number;
  /** The app's developer_data_index (one developer_data_id message per index); default 0. */
  developerDataIndex?: number;
  /** field_definition_number; default: the fields of that developer_data_index numbered 0, 1, … in order of appearance. */
  fieldNumber?: number;
  /** scale and offset written in the description (FIT: physical = stored / scale − offset); `value` gives the stored number. */
  scale?: number;
  offset?: number;
  /** Value of the i-th record as written (undefined: the field is absent from it). */
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
  /** Laps starting at these offsets (s, ascending, the first 0), each up to the next and the last to the end: over `laps`. */
  lapStarts?: number[];
  /** Fields of the i-th record (at start + i s); default: power, heart rate, cadence, speed, distance. */
  record?: (i: number) => RecordFields;
  /** Developer fields on the session's records. */
  developerFields?: DeveloperFieldSpec[];
  /** Offset (s) of the i-th record from start, in file order (irregular, duplicated, out of order); default i. */
  recordTimes?: (i: number) => number;
  /**
   * Timer events besides the default ones (a `start` at the session's start; a `stopAll` at the end
   * of the activity), at `at` s from start: e.g. `{ at: 600, eventType: 'stopAll' }, { at: 780,
   * eventType: 'start' }` for a pause. Written among the records in time order.
   */
  events?: { at: number; eventType: string; event?: string }[];
  /** Extra fields of the session message (fitsdk names: `avgPower`, `totalAscent`, …), over the defaults. */
  sessionFields?: Record<string, unknown>;
  /** Length messages of a pool swim (seconds after the start), written after the records. */
  lengths?: { at: number; elapsed: number; speed: number; cadence: number; type?: 'active' | 'idle' }[];
  /** Extra fields of the l-th lap message (e.g. `totalAscent`). */
  lapFields?: (l: number) => Record<string, unknown>;
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
    {
      mesgNum: MesgNum.DEVICE_INFO,
      timestamp: first,
      deviceIndex: 'creator',
      manufacturer: spec.manufacturer ?? 'garmin',
      product: spec.product ?? 3122,
      sourceType: 'local',
    },
    ...(spec.devices ?? []).map((d) => ({ mesgNum: MesgNum.DEVICE_INFO, timestamp: first, ...d })),
  ];

  // Developer fields: a developer data id per developer_data_index (before its first description),
  // a field description per distinct (developer_data_index, name).
  const developerKeys = new Map<string, number>();
  const fieldNumbers = new Map<number, number>();
  const developerKey = (field: DeveloperFieldSpec) => `${field.developerDataIndex ?? 0}/${field.name}`;
  const encoder = new Encoder();
  for (const session of spec.sessions) {
    for (const field of session.developerFields ?? []) {
      if (developerKeys.has(developerKey(field))) continue;
      const key = developerKeys.size;
      developerKeys.set(developerKey(field), key);
      const developerDataIndex = field.developerDataIndex ?? 0;
      const fieldDefinitionNumber = field.fieldNumber ?? fieldNumbers.get(developerDataIndex) ?? 0;
      const developerDataIdMesg = {
        mesgNum: MesgNum.DEVELOPER_DATA_ID,
        developerDataIndex,
        applicationId: Array.from({ length: 16 }, (_, i) => (i + 1 + 16 * developerDataIndex) & 0xff),
        applicationVersion: 1,
      };
      const fieldDescriptionMesg = {
        mesgNum: MesgNum.FIELD_DESCRIPTION,
        developerDataIndex,
        fieldDefinitionNumber,
        fitBaseTypeId: field.baseType ?? 0x88, // the encoder needs a number; Utils.FitBaseType.FLOAT32 (8) lacks the endian bit
        fieldName: field.name,
        units: field.units ?? '',
        ...(field.nativeMesgNum === null ? {} : { nativeMesgNum: field.nativeMesgNum ?? 'record' }),
        ...(field.nativeFieldNum === undefined ? {} : { nativeFieldNum: field.nativeFieldNum }),
        ...(field.scale === undefined ? {} : { scale: field.scale }),
        ...(field.offset === undefined ? {} : { offset: field.offset }),
      };
      if (!fieldNumbers.has(developerDataIndex)) messages.push(developerDataIdMesg);
      fieldNumbers.set(developerDataIndex, Math.max(fieldNumbers.get(developerDataIndex) ?? 0, fieldDefinitionNumber + 1));
      messages.push(fieldDescriptionMesg);
      encoder.addDeveloperField(key, developerDataIdMesg as never, fieldDescriptionMesg as never);
    }
  }

  let last = first;
  for (const [index, session] of spec.sessions.entries()) {
    const at = (s: number) => new Date(session.start.getTime() + s * 1000);
    const elapsed = session.elapsed ?? session.seconds;
    messages.push({ mesgNum: MesgNum.EVENT, timestamp: session.start, event: 'timer', eventType: 'start' });
    const events = [...(session.events ?? [])].sort((a, b) => a.at - b.at);
    const writeEventsUpTo = (s: number) => {
      while (events.length > 0 && events[0]!.at <= s) {
        const e = events.shift()!;
        messages.push({ mesgNum: MesgNum.EVENT, timestamp: at(e.at), event: e.event ?? 'timer', eventType: e.eventType });
      }
    };
    for (let i = 0; i < session.seconds; i++) {
      const time = session.recordTimes?.(i) ?? i;
      writeEventsUpTo(time);
      const developerFields: Record<number, number> = {};
      for (const field of session.developerFields ?? []) {
        const v = field.value(i);
        if (v !== undefined) developerFields[developerKeys.get(developerKey(field))!] = v;
      }
      messages.push({
        ...(session.record ?? defaultRecord)(i),
        mesgNum: MesgNum.RECORD,
        timestamp: at(time),
        ...(Object.keys(developerFields).length > 0 ? { developerFields } : {}),
      });
    }
    for (const [n, l] of (session.lengths ?? []).entries()) {
      messages.push({
        mesgNum: MesgNum.LENGTH,
        messageIndex: n,
        timestamp: at(l.at + l.elapsed),
        startTime: at(l.at),
        totalElapsedTime: l.elapsed,
        totalTimerTime: l.elapsed,
        avgSpeed: l.speed,
        avgSwimmingCadence: l.cadence,
        lengthType: l.type ?? 'active',
        event: 'length',
        eventType: 'marker',
      });
    }
    const lapCount = session.lapStarts?.length ?? session.laps ?? 1;
    for (let l = 0; l < lapCount; l++) {
      const lapStart = session.lapStarts ? session.lapStarts[l]! : (elapsed * l) / lapCount;
      const lapElapsed = (session.lapStarts ? (session.lapStarts[l + 1] ?? elapsed) : (elapsed * (l + 1)) / lapCount) - lapStart;
      messages.push({
        mesgNum: MesgNum.LAP,
        messageIndex: l,
        timestamp: at(lapStart + lapElapsed),
        startTime: at(lapStart),
        totalElapsedTime: lapElapsed,
        totalTimerTime: lapElapsed,
        event: 'lap',
        eventType: 'stop',
        ...session.lapFields?.(l),
      });
    }
    writeEventsUpTo(Infinity);
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
      ...session.sessionFields,
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
    {
      mesgNum: MesgNum.FILE_ID,
      type: 'settings',
      manufacturer: 'garmin',
      product: 3122,
      serialNumber: 1,
      timeCreated: new Date('2024-01-01T00:00:00Z'),
    },
    { mesgNum: MesgNum.USER_PROFILE, friendlyName: 'Test', weight: 70, gender: 'female', age: 40 },
  ]);
}

/** A valid FIT monitoring file (daily steps/heart rate): no activity in it. */
export function buildMonitoringFit(): Uint8Array {
  const start = new Date('2024-01-01T00:00:00Z');
  const messages: FitMessage[] = [
    { mesgNum: MesgNum.FILE_ID, type: 'monitoringB', manufacturer: 'garmin', product: 3122, serialNumber: 1, timeCreated: start },
  ];
  for (let i = 0; i < 10; i++) {
    messages.push({
      mesgNum: MesgNum.MONITORING,
      timestamp: new Date(start.getTime() + i * 60_000),
      heartRate: 60 + i,
      activityType: 'walking',
      cycles: i * 10,
    });
  }
  return encodeFit(messages);
}
