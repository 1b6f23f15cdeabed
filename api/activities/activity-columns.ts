import type { FrameColumn } from '../../engine/frames/frame.ts';

/**
 * The `activity_id` and `sport` columns of a longitudinal frame: each row's activity is an index
 * into `activities` (−1 for none), written as dictionary-coded strings.
 */
export function activityColumns(owner: Int32Array, activities: readonly { id: string; sport: string }[]): FrameColumn[] {
  const sports = [...new Set(activities.map((a) => a.sport))];
  const sportIndex = new Map(sports.map((s, i) => [s, i]));
  return [
    { name: 'activity_id', type: 'string', codes: owner, labels: activities.map((a) => a.id) },
    { name: 'sport', type: 'string', codes: owner.map((o) => (o < 0 ? -1 : sportIndex.get(activities[o]!.sport)!)), labels: sports },
  ];
}
