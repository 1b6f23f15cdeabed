import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { TestService } from './service.ts';
import { upload } from './activities.ts';

/** GET /readyz: its status and body. */
export async function readiness(service: TestService) {
  const res = await fetch(`${service.url}/readyz`);
  return { status: res.status, body: await res.json() };
}

/**
 * Single uploads of `ride(n)`, one after another (`pauseMs` apart) until stopped, as a client keeps
 * sending through an outage: every 202's sources are `accepted`; anything but 202 or 503 (with
 * Retry-After) fails the test; a request that fails on the wire is counted in `errors`.
 */
export function backgroundUploads(
  t: ExecutionContext,
  service: TestService,
  token: string,
  ride: (n: number) => Uint8Array,
  { pauseMs = 0 } = {},
) {
  const accepted = new Set<string>();
  const statuses: number[] = [];
  const errors: string[] = [];
  let stop = false;
  let n = 0;
  const done = (async () => {
    while (!stop) {
      const res = await upload(service, token, [{ name: `u${n}.fit`, bytes: ride(n) }]).catch((err) => void errors.push(String(err)));
      if (res) {
        statuses.push(res.status);
        if (res.status === 202) {
          for (const s of res.body.sources) accepted.add(s.id);
          n++;
        } else if (res.status === 503) t.truthy(res.headers.get('retry-after'), 'a 503 says when to retry');
        else t.fail(`upload answered ${res.status} ${JSON.stringify(res.body)}`);
      }
      if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
    }
  })();
  return {
    accepted,
    statuses,
    errors,
    async stop() {
      stop = true;
      await done;
    },
  };
}

/** Every activity of the user has its sample file, and every file in their folder is an activity's (no leftovers). */
export async function assertSampleFiles(t: ExecutionContext, service: TestService, userId: string) {
  const rows = await service.deps.db.selectFrom('activities').select('id').where('user_id', '=', userId).execute();
  let files: string[] = [];
  try {
    files = readdirSync(join(service.config.DATA_DIR, 'users', userId, 'activities'));
  } catch {
    // no activity yet
  }
  t.deepEqual(files.sort(), rows.map((r) => `${r.id}.parquet`).sort(), 'no sample file orphaned or missing');
}
