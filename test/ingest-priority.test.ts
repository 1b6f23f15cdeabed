import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService } from './helpers/service.ts';
import { enqueueIngest } from '../workers/queues.ts';

/**
 * Issue 16, fairness: one user's history must not delay another's files. Manual uploads are served
 * before any history file; history files take turns across backfills (the k-th file of each has
 * priority 10 + k), newest first within each.
 */
let service: TestService;
test.before(async () => {
  service = await startTestService(); // no workers: the queue keeps what is added, in serving order
});
test.after.always(() => service?.close());

test("the serving order: uploads first, then the backfills' files taking turns, each backfill newest first", async (t) => {
  const queue = service.deps.queues.ingest;
  const big = Array.from({ length: 50 }, () => randomUUID());
  const small = [randomUUID()];
  const upload = [randomUUID()];
  await enqueueIngest(service.deps.queues, big, { backfill: true });
  await enqueueIngest(service.deps.queues, small, { backfill: true });
  await enqueueIngest(service.deps.queues, upload);

  // What BullMQ serves next: the waiting (unprioritised) jobs, then the prioritised ones lowest
  // priority first, in insertion order among equals.
  const waiting = await queue.getWaiting(0, -1);
  const prioritised = (await queue.getPrioritized(0, -1)).sort(
    (a, b) => a.opts.priority! - b.opts.priority! || Number(a.timestamp) - Number(b.timestamp) || Number(a.id!.localeCompare(b.id!)),
  );
  t.deepEqual(
    waiting.map((j) => j.data.sourceId),
    upload,
  );
  const order = prioritised.map((j) => j.data.sourceId);
  t.is(order.length, 51);
  t.true(
    order.indexOf(small[0]!) <= 1,
    `the one-file history is served among the first two history files, not after ${order.indexOf(small[0]!)}`,
  );
  const bigOrder = order.filter((id) => id !== small[0]);
  t.deepEqual(bigOrder, big, 'the big history keeps its own order (newest first)');
});
