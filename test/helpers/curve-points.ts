/** What the web app's curve charts should draw for a longitudinal mean-max frame (JSON, column-oriented). */

export type Frame = Record<string, (number | string | null)[]>;

/**
 * The power-duration curve of a value-indexed frame, written from its definition: at each distinct
 * duration of the frame, the highest level sustained at least that long, and that row's activity.
 */
export function expectedCurve(f: Frame, metric = 'power') {
  const levels = f[metric] as number[];
  const durations = f.duration as number[];
  const xs = [...new Set(durations.filter((d) => d >= 1))].sort((a, b) => a - b);
  return xs.map((d) => {
    let best = -1;
    for (let k = 0; k < levels.length; k++) if (durations[k]! >= d && (best < 0 || levels[k]! > levels[best]!)) best = k;
    return { duration: d, value: levels[best]!, activity: f.activity_id![best] as string };
  });
}
