import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as Awd from '../../../engine/curves/awd.ts';
import type * as ActivityCurves from '../../../engine/curves/activity-curves.ts';
import type * as Levels from '../../../engine/curves/levels.ts';
import type * as MeanMax from '../../../engine/curves/mean-max.ts';
import type * as ValueIndexed from '../../../engine/curves/value-indexed.ts';
import type * as Fit from '../../../engine/ingest/fit.ts';
import type * as Ingest from '../../../engine/ingest/ingest.ts';
import type * as Peek from '../../../engine/ingest/peek.ts';
import type * as Resample from '../../../engine/ingest/resample.ts';
import type * as Summary from '../../../engine/ingest/summary.ts';
import type * as Pool from '../../../engine/pool.ts';
import type * as SampleFile from '../../../engine/samples/sample-file.ts';
import { fitFileParserDecode } from '../../fit-decode.ts';
import { buildRideFit } from '../../../test/helpers/synthetic.ts';
import type { Family, Row, Tree } from '../row.ts';
import { databaseRows } from './backfill-stages-db.ts';

/**
 * The backfill-stages benchmark (bench/backfill-stages.ts) as compare rows: where one backfilled
 * file's ingest job spends its time, a row per stage, each calling the tree's own functions on the
 * same input: the benchmark's first synthetic 2 h ride (seed 7), made here. One sample of a row is
 * one run of its stage on that ride, in this process, one at a time: the peek, parseFit (with
 * fit-file-parser for the whole file, and with the lean record path), resampling, summary and laps,
 * the curves (the mean-max kernel apart from the value-indexed view, AWD and zero-fill), the whole
 * ingest task, the task through a one-thread engine pool (the benchmark's round trip is this row
 * minus ingest-task), the Parquet sample file (COPY alone, and as the worker writes it: COPY, fsync,
 * rename) and the job's PostgreSQL statements (./backfill-stages-db.ts). The fit-file-parser decode
 * (bench/fit-decode.ts, library code, the same on both sides) is a control. Each stage's input is
 * made by the tree's earlier stages (the grid by its parseFit and resample, …). Not here: the
 * benchmark's webhook and BullMQ figures, which are not one number per run of a stage.
 */
const SECONDS = 2 * 3600;

export const backfillStagesFamily: Family = {
  name: 'backfill-stages',
  // Both trees' stages in one process: in separate processes two short A/A runs on a loaded machine
  // gave up to +23 % on the CPU stages (resample), as separate processes do for the engine. Each tree
  // opens its own DuckDB instance, engine pool and database connections; DuckDB's addon makes it
  // `native` (shared only when both trees use the same node_modules).
  isolation: 'shared',
  native: true,
  threshold: 0.05,
  forks: 3,
  about:
    'one 2 h ride\u2019s ingest job, stage by stage (decode, resample, summary, curves, pool, sample file, PostgreSQL); a fit-file-parser decode as a control',
  async open(tree: Tree) {
    const { parseFit } = await tree.load<typeof Fit>('engine/ingest/fit.ts');
    const { resample } = await tree.load<typeof Resample>('engine/ingest/resample.ts');
    const { summarise, lapStats } = await tree.load<typeof Summary>('engine/ingest/summary.ts');
    const { zeroFilled } = await tree.load<typeof ActivityCurves>('engine/curves/activity-curves.ts');
    const { meanMaxAll } = await tree.load<typeof MeanMax>('engine/curves/mean-max.ts');
    const { valueIndexed } = await tree.load<typeof ValueIndexed>('engine/curves/value-indexed.ts');
    const { accumulatedWorkDuration } = await tree.load<typeof Awd>('engine/curves/awd.ts');
    const { LEVEL_STEP } = await tree.load<typeof Levels>('engine/curves/levels.ts');
    const { ingestFile } = await tree.load<typeof Ingest>('engine/ingest/ingest.ts');
    const { recordedAt } = await tree.load<typeof Peek>('engine/ingest/peek.ts');
    const { createEnginePool } = await tree.load<typeof Pool>('engine/pool.ts');
    const { createSampleStore } = await tree.load<typeof SampleFile>('engine/samples/sample-file.ts');

    const bytes = buildRideFit({ start: new Date(Date.UTC(2025, 0, 1, 7, 0, 0)), seconds: SECONDS, seed: 7 });
    const recording = (await parseFit(bytes))[0]!;
    const grid = resample(recording);
    const metrics = (['power', 'speed'] as const).map((metric) => {
      const x = grid.channels[metric]!;
      const filled = zeroFilled(x);
      return { metric, x, filled, mm: meanMaxAll(filled) };
    });
    const ingested = await ingestFile({ format: 'fit', bytes, sport: null });
    if (!ingested.ok) throw new Error(`the tree's ingest task failed on the synthetic ride: ${ingested.code} ${ingested.message}`);
    const activity = ingested.activities[0]!;

    const closing: (() => Promise<unknown>)[] = [];
    const close = async () => {
      for (const step of closing.splice(0).reverse()) await step();
    };
    try {
      const pool = createEnginePool({ threads: 1 });
      closing.push(() => pool.close());
      const store = await createSampleStore();
      closing.push(() => store.close());
      const noSync = await createSampleStore({ fsync: false });
      closing.push(() => noSync.close());
      const dir = mkdtempSync(path.join(os.tmpdir(), 'tds-compare-stages-'));
      closing.push(async () => rmSync(dir, { recursive: true, force: true }));

      const row = (stage: string, label: string, run: () => unknown): Row => ({ id: `backfill-stages/${stage}`, label, run });
      const rows: Row[] = [
        row('peek', 'peek (recordedAt, scan)', () => recordedAt(bytes, 'fit')),
        row('decode-fit-file-parser', 'control: decode, fit-file-parser', () => fitFileParserDecode(bytes)),
        row('parsefit-library', 'parseFit, fit-file-parser for the whole file (decode + records → channels)', () =>
          parseFit(bytes, { decoder: 'library' }),
        ),
        row('parsefit-lean', 'parseFit (lean record path + fit-file-parser for the rest)', () => parseFit(bytes)),
        row('resample', 'resample', () => resample(recording)),
        row('summary-laps', 'summary + laps', () => {
          summarise(grid, 0, grid.length);
          lapStats(grid, recording.laps, { start: grid.start, end: recording.end.getTime() });
        }),
        row('curves-mean-max', 'curves: meanMaxAll (power, speed)', () => {
          for (const m of metrics) meanMaxAll(m.filled);
        }),
        row('curves-value-indexed-awd-zero-fill', 'curves: value-indexed + AWD + zero-fill (power, speed; AWD of heart rate)', () => {
          for (const { metric, x, mm } of metrics) {
            zeroFilled(x);
            valueIndexed(mm.best, mm.start, LEVEL_STEP[metric]);
            accumulatedWorkDuration(x, LEVEL_STEP[metric]);
          }
          accumulatedWorkDuration(grid.channels.heart_rate!, LEVEL_STEP.heart_rate);
        }),
        row('ingest-task', 'ingest task in-process (all of the above but peek/decode)', () =>
          ingestFile({ format: 'fit', bytes, sport: null }),
        ),
        row('engine-pool-ingest', 'the ingest task through a one-thread engine pool (hand-off, clone/transfer, task)', async () => {
          const r = await pool.runIngest({ format: 'fit', bytes: new Uint8Array(bytes), sport: null });
          if (!r.ok) throw new Error(`engine pool ingest: ${r.code} ${r.message}`);
        }),
        row('sample-file-copy', 'sample file: DuckDB COPY → Parquet (no fsync)', () =>
          noSync.writeSampleFile(path.join(dir, 'nosync.parquet'), activity),
        ),
        row('sample-file-write', 'sample file: as the worker writes it (COPY + fsync + rename)', () =>
          store.writeSampleFile(path.join(dir, 'sample.parquet'), activity),
        ),
      ];
      const db = await databaseRows(tree, activity);
      closing.push(db.close);
      rows.push(...db.rows);
      return { rows, close };
    } catch (err) {
      await close();
      throw err;
    }
  },
};
