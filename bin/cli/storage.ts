import { SingleBar } from 'cli-progress';
import type { Config } from '../../lib/config.ts';
import type { ObjectStore } from '../../lib/object-store.ts';
import { createLocalObjectStore } from '../../lib/object-store-local.ts';
import { createS3ObjectStore } from '../../lib/object-store-s3.ts';
import { objectStoreProblem, s3Settings } from '../../lib/object-store-setup.ts';
import { type Flags, print, REPORT_EVERY_MS, UsageError } from './common.ts';

/** Objects copied at once. */
const COPIES_IN_FLIGHT = 8;

interface Tally {
  objects: number;
  bytes: number;
  copied: number;
  copiedBytes: number;
  alreadyThere: number;
  failed: { key: string; reason: string }[];
}

/**
 * `storage migrate --to s3|local`: every object (originals, sample files, history archives) of the
 * data directory copied into the S3 store the S3_* settings name, or back. Each copy is verified
 * (the target's entity tag, MD5 or MD5 of parts, against the source's), an object the target holds
 * already with the same tag is skipped: run again after an interruption, it copies only what is
 * missing or differs, and a second run copies nothing. The source is left as it was. Exit status:
 * 0 every object is in the target and verified, 3 some failed (listed).
 */
export async function storageMigrate(config: Config, flags: Flags, json: boolean): Promise<void> {
  const to = flags.to;
  if (to !== 's3' && to !== 'local') throw new UsageError('--to must be s3 or local');
  if (!config.S3_BUCKET || !config.S3_ACCESS_KEY_ID || !config.S3_SECRET_ACCESS_KEY)
    throw new UsageError(
      'S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT for a store other than AWS) must name the store',
    );
  const s3Config = { ...config, STORAGE: 's3' as const };
  const problem = await objectStoreProblem(s3Config);
  if (problem) throw new UsageError(problem);
  const local = createLocalObjectStore(config.DATA_DIR);
  const s3 = createS3ObjectStore(s3Settings(s3Config));
  const [from, into] = to === 's3' ? [local, s3] : [s3, local];
  try {
    const objects: { key: string; size: number }[] = [];
    for await (const o of from.list('')) objects.push(o);
    const tally: Tally = {
      objects: objects.length,
      bytes: objects.reduce((n, o) => n + o.size, 0),
      copied: 0,
      copiedBytes: 0,
      alreadyThere: 0,
      failed: [],
    };
    process.stderr.write(`storage: ${objects.length} objects (${mb(tally.bytes)}) from ${from.where} to ${into.where}\n`);
    const progress = reporter(objects.length, tally.bytes, json);
    let next = 0;
    const lane = async () => {
      while (next < objects.length) {
        const o = objects[next++]!;
        try {
          if (await copyOne(from, into, o.key, local)) {
            tally.copied++;
            tally.copiedBytes += o.size;
          } else tally.alreadyThere++;
        } catch (err) {
          tally.failed.push({ key: o.key, reason: (err as Error).message });
        }
        progress.update(tally);
      }
    };
    await Promise.all(Array.from({ length: COPIES_IN_FLIGHT }, lane));
    progress.stop(tally);
    const summary = {
      to,
      from: from.where,
      into: into.where,
      objects: tally.objects,
      bytes: tally.bytes,
      copied: tally.copied,
      copied_bytes: tally.copiedBytes,
      already_there: tally.alreadyThere,
      failed: tally.failed,
    };
    print(
      json,
      summary,
      `${tally.copied} copied (${mb(tally.copiedBytes)}), ${tally.alreadyThere} already there, ${tally.failed.length} failed, of ${tally.objects} objects; each verified by its entity tag` +
        tally.failed.map((f) => `\n  ${f.key}: ${f.reason}`).join('') +
        (tally.failed.length
          ? ''
          : `\nNext: set STORAGE=${to} for the service${to === 's3' ? ' (the files under DATA_DIR stay until you remove them)' : ''}.`),
    );
    if (tally.failed.length) process.exitCode = 3;
  } finally {
    s3.close();
  }
}

/** Copy one object unless the target holds it with the same tag; then check the copy's tag. Whether it copied. */
async function copyOne(from: ObjectStore, into: ObjectStore, key: string, local: ObjectStore): Promise<boolean> {
  const [source, there] = await Promise.all([from.head(key), into.head(key)]);
  if (!source) throw new Error('removed from the source meanwhile');
  if (there && there.etag === source.etag && there.size === source.size) return false;
  if (into === local) await from.download(key, local.fileOf!(key));
  else await into.putFile(key, local.fileOf!(key));
  const copy = await into.head(key);
  if (!copy || copy.etag !== source.etag || copy.size !== source.size) {
    if (into === local) await into.remove([key]);
    throw new Error(`the copy's tag ${copy?.etag ?? '(none)'} differs from the source's ${source.etag}`);
  }
  return true;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A bar on a terminal, else a line every REPORT_EVERY_MS (none with --json: the summary is the output). */
function reporter(total: number, bytes: number, json: boolean) {
  const done = (t: Tally) => t.copied + t.alreadyThere + t.failed.length;
  if (process.stdout.isTTY && !json) {
    const bar = new SingleBar({
      format: 'storage [{bar}] {value}/{total} objects | {copied} copied, {there} already there, {failed} failed | {eta_formatted}',
      hideCursor: true,
    });
    bar.start(total, 0, { copied: 0, there: 0, failed: 0 });
    return {
      update: (t: Tally) => bar.update(done(t), { copied: t.copied, there: t.alreadyThere, failed: t.failed.length }),
      stop: (t: Tally) => {
        bar.update(done(t), { copied: t.copied, there: t.alreadyThere, failed: t.failed.length });
        bar.stop();
      },
    };
  }
  let last = 0;
  const line = (t: Tally) =>
    json
      ? undefined
      : process.stdout.write(
          `storage: ${done(t)}/${total} objects (${mb(t.copiedBytes)} of ${mb(bytes)} copied), ${t.failed.length} failed\n`,
        );
  return {
    update: (t: Tally) => {
      if (Date.now() - last < REPORT_EVERY_MS) return;
      last = Date.now();
      line(t);
    },
    stop: line,
  };
}
