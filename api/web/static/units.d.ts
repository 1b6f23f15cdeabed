// Types of units.js for the server-rendered pages (api/web/*.ts), which import the same module the browser does.
export type Units = 'metric' | 'imperial';
export declare const UNIT_SYSTEMS: Units[];
export declare function speedStyle(sport: string | null): 'pace' | 'swim' | 'speed';
export declare function speedUnit(sport: string | null, units: Units): string;
export declare function isPace(sport: string | null): boolean;
export declare function speedValue(mps: number | null | undefined, sport: string | null, units: Units): number | null;
export declare function formatSpeed(mps: number | null | undefined, sport: string | null, units: Units): string;
export declare function speedTick(value: number | null | undefined, sport: string | null): string;
export declare function formatDistance(metres: number | null | undefined, units: Units, digits?: number): string;
export declare function pageUnits(): Units;
/** How a metric reads on a chart (speedDisplay, metricDisplay). */
export interface Display {
  label: string;
  unit: string;
  convert: (v: number | null | undefined) => number | null;
  text: (v: number | null | undefined) => string;
  tick: ((v: number | null | undefined) => string) | null;
  reversed: boolean;
}
export declare function speedDisplay(sport: string | null, units: Units): Display;
export declare function metricDisplay(metric: string, sport: string | null, units?: Units): Display;
export declare function minutesSeconds(seconds: number): string;
export declare function distanceValue(metres: number, units: Units): number;
