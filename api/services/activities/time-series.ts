import type { FrameColumn } from '../../../engine/frames/frame.ts';
import type { SampleFile } from '../../../engine/samples/sample-file.ts';
import { SEGMENT_TOLERANCE, segment, segmentMeans, type Segmentation } from '../../../engine/frames/segmentation.ts';
import type { ActivityDataMetric } from './curve-params.ts';

/**
 * An activity's samples as time-series columns (docs/api-clients.md, "Curves and time series"): `timestamp` (UTC), `timestamp_local`
 * (naive wall time), then the metrics in the order asked. At 1 Hz every row is one second
 * (`duration` 1); with `segmentation_on`, each row is a segment (engine/frames/segmentation.ts) starting
 * at its timestamp, `duration` its length, and every channel the mean of its samples there.
 * A channel the activity does not record is a column of nulls.
 */
export function timeSeriesColumns(
  file: SampleFile,
  utcOffsetSeconds: number,
  metrics: readonly ActivityDataMetric[],
  segmentationOn?: 'power' | 'speed',
  derived: Partial<Record<DerivedMetric, Float64Array>> = {},
): FrameColumn[] {
  const seg: Segmentation = segmentationOn
    ? segment(file.channels[segmentationOn]!, SEGMENT_TOLERANCE[segmentationOn])
    : { start: Int32Array.from({ length: file.length }, (_, i) => i), length: new Int32Array(file.length).fill(1) };
  const rows = seg.start.length;
  const timestamp = new Float64Array(rows);
  const local = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    timestamp[r] = file.start + seg.start[r]! * 1000;
    local[r] = timestamp[r]! + utcOffsetSeconds * 1000;
  }
  const columns: FrameColumn[] = [
    { name: 'timestamp', type: 'timestamptz', values: timestamp },
    { name: 'timestamp_local', type: 'timestamp', values: local },
  ];
  for (const metric of metrics) {
    if (metric === 'duration') columns.push({ name: 'duration', type: 'int32', values: seg.length });
    else {
      const channel =
        metric === 'w_prime_balance' ? (derived[metric] ?? new Float64Array(file.length).fill(Number.NaN)) : file.channels[metric]!;
      columns.push({ name: metric, type: 'double', values: segmentationOn ? segmentMeans(channel, seg) : channel });
    }
  }
  return columns;
}

/** Metrics computed from channels rather than read: W′ balance, from power. */
export type DerivedMetric = 'w_prime_balance';

/** The sample channels to read for these metrics (and the segmentation channel). */
export function channelsFor(metrics: readonly ActivityDataMetric[], segmentationOn?: 'power' | 'speed'): string[] {
  const channels = [...new Set(metrics.filter((m) => m !== 'duration').map((m) => (m === 'w_prime_balance' ? 'power' : m)))] as string[];
  if (segmentationOn && !channels.includes(segmentationOn)) channels.push(segmentationOn);
  return channels;
}

/** Metrics as asked, each once, in the order first asked. */
export function uniqueMetrics<M extends ActivityDataMetric>(metrics: readonly M[]): M[] {
  return [...new Set(metrics)];
}
