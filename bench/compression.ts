import http from 'node:http';
import os from 'node:os';
import { startTestService } from '../test/helpers/service.ts';
import { createTestUser, tokenFor } from '../test/helpers/users.ts';
import { uploadAndWait } from '../test/helpers/activities.ts';
import { buildRideFit } from '../test/helpers/synthetic.ts';
import { distribution, formatTable, recordTarget, writeReport, type Distribution } from './report.ts';

/**
 * Issue 17 item 2: what compression does to a large JSON frame. A synthetic 4 h ride (FIT, every
 * channel) is uploaded; its per-activity `data` frame as JSON (`format=json`, every channel: 14,400
 * rows) is read BENCH_COMPRESSION_RUNS times (default 20, after one warm-up) with no Accept-Encoding,
 * with gzip and with br, one request at a time on loopback: the bytes on the wire and the time to the
 * last byte (the frame comes from the curve cache, so the figures are the cost of sending it).
 * Loopback has no transfer time to save, so the table adds the p50 plus the bytes' time on a
 * 100 Mbit/s link (a modelled figure: what a client on a fast connection would wait).
 * Targets: each coding sends at most a quarter of the bytes, and on that link answers sooner than
 * identity.
 */
const RUNS = Number(process.env.BENCH_COMPRESSION_RUNS ?? 20);
const METRICS = 'duration,power,speed,heart_rate,cadence,altitude,distance,latitude,longitude';
const TARGET = { ratio: 0.25 };
/** 100 Mbit/s in bytes per ms. */
const LINK_BYTES_PER_MS = 100e6 / 8 / 1000;
const onLink = (p50: number, bytes: number) => p50 + bytes / LINK_BYTES_PER_MS;

function timedGet(url: string, headers: Record<string, string>): Promise<{ ms: number; bytes: number; encoding: string | undefined }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve({ ms: performance.now() - t0, bytes, encoding: res.headers['content-encoding'] })
            : reject(new Error(`status ${res.statusCode}`)),
        );
      })
      .on('error', reject);
  });
}

export async function benchCompression() {
  const service = await startTestService({ workers: true, env: { LOG_LEVEL: 'warn' } });
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read', 'data:write']);
    const fit = buildRideFit({ start: new Date('2026-03-01T08:00:00Z'), seconds: 4 * 3600, seed: 17 });
    const [source] = await uploadAndWait(service, token, [{ name: 'ride.fit', bytes: fit }]);
    if (source.status !== 'processed') throw new Error(`upload: ${JSON.stringify(source)}`);
    const url = `${service.url}/api/v1/activities/${source.activity_ids[0]}/data?format=json&metrics=${METRICS}`;

    const rows: { workload: string; bytes: number; ratio: number; latency: Distribution; link_100mbit_ms: number }[] = [];
    let identity: { bytes: number; p50: number; link: number } | undefined;
    for (const [workload, coding] of [
      ['no Accept-Encoding (identity)', undefined],
      ['Accept-Encoding: gzip (level 6)', 'gzip'],
      ['Accept-Encoding: br (quality 4)', 'br'],
    ] as const) {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(coding ? { 'accept-encoding': coding } : {}) };
      const warm = await timedGet(url, headers);
      if (warm.encoding !== coding) throw new Error(`${workload}: answered with ${warm.encoding ?? 'identity'}`);
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) ms.push((await timedGet(url, headers)).ms);
      const latency = distribution(ms);
      const link = Math.round(onLink(latency.p50_ms, warm.bytes) * 100) / 100;
      identity ??= { bytes: warm.bytes, p50: latency.p50_ms, link };
      const ratio = warm.bytes / identity.bytes;
      rows.push({ workload, bytes: warm.bytes, ratio, latency, link_100mbit_ms: link });
      if (coding) {
        const added = latency.p50_ms - identity.p50;
        recordTarget({
          benchmark: 'compression',
          target: `4 h ride JSON frame, ${coding}: ≤ ${TARGET.ratio * 100}% of the bytes, sooner than identity at 100 Mbit/s`,
          figure: `${(ratio * 100).toFixed(1)}% (${warm.bytes} of ${identity.bytes} bytes); loopback p50 ${latency.p50_ms} ms (${added >= 0 ? '+' : ''}${added.toFixed(2)}); at 100 Mbit/s ${link} ms vs ${identity.link} ms`,
          met: ratio <= TARGET.ratio && link < identity.link,
        });
      }
    }
    process.stdout.write(
      `\n== compression\n\nGET /activities/{id}/data?format=json (4 h ride, ${METRICS.split(',').length} columns), ${RUNS} sequential requests each, loopback, ${os.cpus().length} cores, Node ${process.version}\n\n`,
    );
    process.stdout.write(
      formatTable(
        ['workload', 'bytes', 'of identity', 'p50 ms', 'p95 ms', 'max ms', 'p50 + 100 Mbit/s ms'],
        rows.map((r) => [
          r.workload,
          String(r.bytes),
          `${(r.ratio * 100).toFixed(1)}%`,
          r.latency.p50_ms.toFixed(2),
          r.latency.p95_ms.toFixed(2),
          r.latency.max_ms.toFixed(2),
          r.link_100mbit_ms.toFixed(1),
        ]),
      ),
    );
    const report = {
      benchmark: 'compression',
      at: new Date().toISOString(),
      node: process.version,
      cores: os.cpus().length,
      runs: RUNS,
      rows,
    };
    process.stdout.write(`\nwrote ${writeReport('compression', report)} and bench/results/latest.json\n`);
  } finally {
    await service.close();
  }
}
