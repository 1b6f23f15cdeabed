import { createSampleStore } from './engine/samples/sample-file.ts';
import { createFrameWriter } from './engine/frames/parquet-writer.ts';
import { durationFrame } from './engine/frames/curve-frames.ts';
import { DEFAULT_DURATIONS } from './engine/curves/durations.ts';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
const store = await createSampleStore({ fsync: false });
const frames = createFrameWriter(store);
const durations = Int32Array.from(DEFAULT_DURATIONS);
const acts = Array.from({ length: 300 }, (_, i) => ({ id: randomUUID(), sport: 'cycling.road', start: Date.UTC(2025, 0, 1) + i * 86400e3 }));
const curves = Array.from({ length: 5 }, () => ({ best: Float64Array.from(durations, (d) => 1000 / Math.log(d + 2)), start: Int32Array.from(durations, () => 100), owner: Int32Array.from(durations, () => Math.floor(Math.random() * 300)) }));
const frame = durationFrame('power', durations, curves as any, acts, [0, 250, 500, 1000, 1500]);
const dirs = { disk: '/tmp/pq-bench', shm: '/dev/shm/pq-bench' };
for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
async function time(name: string, fn: () => Promise<unknown>, n = 300) {
  for (let i = 0; i < 30; i++) await fn();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  const wall = (performance.now() - t0) / n; const cpu = process.cpuUsage(c0); 
  console.log(name.padEnd(30), 'wall', wall.toFixed(2), 'ms  cpu', ((cpu.user + cpu.system) / 1000 / n).toFixed(2), 'ms');
}
for (let round = 0; round < 2; round++) {
  await time('toParquetBuffer disk', () => frames.toParquetBuffer(frame, dirs.disk));
  await time('toParquetBuffer shm', () => frames.toParquetBuffer(frame, dirs.shm));
  await time('SELECT 1', () => store.withConnection((c) => c.run('SELECT 1')));
  await time('COPY (SELECT 1) shm', () => store.withConnection((c) => c.run(`COPY (SELECT 1 AS x) TO '/dev/shm/pq-bench/x.parquet' (FORMAT parquet, COMPRESSION zstd)`)));
  await time('COPY range(95) 6 cols shm', () => store.withConnection((c) => c.run(`COPY (SELECT range::INT AS a, range*1.5 AS b, make_timestamptz(range*1000000) AS c, 'x'||range AS d, 'cycling' AS e, range*2.0 AS f FROM range(95)) TO '/dev/shm/pq-bench/x.parquet' (FORMAT parquet, COMPRESSION zstd)`)));
  await time('COPY range(95) uncompressed', () => store.withConnection((c) => c.run(`COPY (SELECT range::INT AS a, range*1.5 AS b, make_timestamptz(range*1000000) AS c, 'x'||range AS d, 'cycling' AS e, range*2.0 AS f FROM range(95)) TO '/dev/shm/pq-bench/x.parquet' (FORMAT parquet, COMPRESSION uncompressed)`)));
}
await store.close();
