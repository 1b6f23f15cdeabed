/**
 * OpenSportTaxonomy sports (docs/api-clients.md, "Conventions"): a dotted code path plus alphabetically sorted
 * `+modifier`s, e.g. `cycling.road`, `cycling+stationary+virtual`, `xc_skiing.skate+roller`.
 * Known legacy names are normalised on input; a filter sport matches its sub-sports.
 */

const WORD = '[a-z]+(?:_[a-z]+)*';
export const SPORT_PATTERN = new RegExp(`^${WORD}(?:\\.${WORD})*(?:\\+${WORD})*$`);

export interface Sport {
  /** The dotted code path, e.g. `cycling.road`. */
  code: string;
  /** Sorted, without duplicates. */
  modifiers: string[];
}

/** Legacy code paths and what they became: [old prefix, new code, added modifiers]. */
const LEGACY: [string, string, string[]][] = [
  ['cycling.trainer', 'cycling', ['stationary']],
  ['running.treadmill', 'running', ['stationary']],
  ['rowing.ergometer', 'rowing', ['stationary']],
  ['cycling.tt', 'cycling.time_trial', []],
  ['cycling.mountainbike', 'cycling.mountain', []],
  ['cross_country_skiing', 'xc_skiing', []],
  ['unknown', 'generic', []],
];

/** Parse and normalise a sport string; undefined when it is not well-formed. */
export function parseSport(input: string): Sport | undefined {
  const value = input.trim().toLowerCase();
  if (value.length > 200 || !SPORT_PATTERN.test(value)) return undefined;
  const [path, ...mods] = value.split('+') as [string, ...string[]];
  let code = path;
  const modifiers = new Set(mods);
  for (const [old, replacement, added] of LEGACY) {
    if (code === old || code.startsWith(`${old}.`)) {
      code = replacement + code.slice(old.length);
      for (const m of added) modifiers.add(m);
      break;
    }
  }
  return { code, modifiers: [...modifiers].sort() };
}

export function formatSport(sport: Sport): string {
  return [sport.code, ...sport.modifiers].join('+');
}

/** The canonical form of a sport string, or undefined when it is not well-formed. */
export function normaliseSport(input: string): string | undefined {
  const sport = parseSport(input);
  return sport && formatSport(sport);
}

/**
 * Whether `sport` matches the filter `filter`: its code equals or descends from the filter's code,
 * and it has every modifier the filter names (`cycling` matches `cycling.road+virtual`;
 * `cycling+stationary` matches `cycling.road+stationary` but not `cycling.road`).
 */
export function sportMatches(sport: string, filter: string): boolean {
  const s = parseSport(sport);
  const f = parseSport(filter);
  if (!s || !f) return false;
  const codeOk = s.code === f.code || s.code.startsWith(`${f.code}.`);
  return codeOk && f.modifiers.every((m) => s.modifiers.includes(m));
}

/** The root code of a sport (`cycling.road+virtual` → `cycling`). */
export function rootSport(sport: string): string | undefined {
  return parseSport(sport)?.code.split('.')[0];
}

/**
 * FIT `sport`/`sub_sport` enum names (as decoded, e.g. `cycling`/`indoor_cycling`) to a sport.
 * Unknown sports are `generic`; an unknown sub-sport keeps the sport's root.
 */
const FIT_SPORTS: Record<string, string> = {
  generic: 'generic',
  running: 'running',
  cycling: 'cycling',
  swimming: 'swimming',
  walking: 'walking',
  hiking: 'hiking',
  rowing: 'rowing',
  cross_country_skiing: 'xc_skiing',
  alpine_skiing: 'alpine_skiing',
  snowboarding: 'snowboarding',
  mountaineering: 'mountaineering',
  fitness_equipment: 'fitness_equipment',
  training: 'training',
  transition: 'transition',
  e_biking: 'cycling+electric',
  paddling: 'paddling',
  stand_up_paddleboarding: 'paddling.stand_up',
  kayaking: 'paddling.kayaking',
  rafting: 'paddling.rafting',
  inline_skating: 'inline_skating',
  ice_skating: 'ice_skating',
  multisport: 'multisport',
  triathlon: 'multisport.triathlon',
};

const FIT_SUB_SPORTS: Record<string, Record<string, string>> = {
  cycling: {
    road: 'cycling.road',
    mountain: 'cycling.mountain',
    downhill: 'cycling.mountain.downhill',
    cyclocross: 'cycling.cyclocross',
    gravel_cycling: 'cycling.gravel',
    track_cycling: 'cycling.track',
    track: 'cycling.track',
    recumbent: 'cycling+recumbent',
    indoor_cycling: 'cycling+stationary',
    spin: 'cycling+stationary',
    virtual_activity: 'cycling+stationary+virtual',
    commuting: 'cycling.commuting',
    bmx: 'cycling.bmx',
    hand_cycling: 'cycling+hand',
    e_bike_fitness: 'cycling+electric',
    e_bike_mountain: 'cycling.mountain+electric',
  },
  running: {
    road: 'running.road',
    street: 'running.road',
    trail: 'running.trail',
    track: 'running.track',
    treadmill: 'running+stationary',
    indoor_running: 'running+stationary',
    virtual_activity: 'running+stationary+virtual',
    ultra: 'running.ultra',
  },
  swimming: { lap_swimming: 'swimming.pool', open_water: 'swimming.open_water' },
  rowing: { indoor_rowing: 'rowing+stationary' },
  fitness_equipment: { indoor_rowing: 'rowing+stationary', indoor_cycling: 'cycling+stationary', treadmill: 'running+stationary' },
  cross_country_skiing: { skate_skiing: 'xc_skiing.skate', backcountry: 'xc_skiing.backcountry' },
  walking: { indoor_walking: 'walking+stationary', casual_walking: 'walking' },
};

export function sportFromFit(sport: string | number | undefined, subSport: string | number | undefined): string {
  const s = typeof sport === 'string' ? sport : undefined;
  const sub = typeof subSport === 'string' ? subSport : undefined;
  const bySub = s && sub ? FIT_SUB_SPORTS[s]?.[sub] : undefined;
  return bySub ?? (s ? FIT_SPORTS[s] : undefined) ?? 'generic';
}
