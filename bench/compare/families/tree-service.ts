import { sql } from 'kysely';
import type { TestService } from '../../../test/helpers/service.ts';
import type { Tree } from '../row.ts';

/**
 * What the service families (curves, longitudinal) take from the tree they are opened on: a named
 * export of one of its modules, checked, and its own service (test/helpers/service.ts) with a user
 * and a `data:read` token (test/helpers/users.ts), to which HTTP rows send their requests. Nothing
 * here is timed.
 */

/** `name` exported by the tree's `file`, or an error saying which is missing at this tree. */
export async function exportOf<T>(tree: Tree, file: string, name: string): Promise<T> {
  let module: Record<string, unknown>;
  try {
    module = await tree.load(file);
  } catch (err) {
    throw new Error(`cannot load ${file} of the tree ${tree.root}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (module[name] === undefined) throw new Error(`${file} of the tree ${tree.root} exports no ${name} (this family needs it)`);
  return module[name] as T;
}

export interface TreeService {
  service: TestService;
  userId: string;
  /** The user's email (its password is the test helpers' TEST_PASSWORD): pages sign in with it. */
  email: string;
  /** GET `path` with the user's token; the whole body read; throws unless 200. */
  get(path: string, accept?: string): Promise<{ body: ArrayBuffer; type: string | null }>;
  /**
   * After seeding: VACUUM ANALYZE of the tree's database, so that both sides' planners start from
   * fresh statistics rather than from wherever autovacuum happened to be. Without it, in an A/A run
   * of curves the side seeded second read its Parquet request 14 % faster, in each of 3 forks.
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** The tree's own service (its API, in this process) with `env`, and a user with a `data:read` token. */
export async function startTreeService(tree: Tree, env: Record<string, string>): Promise<TreeService> {
  const startTestService = await exportOf<(opts: { env: Record<string, string> }) => Promise<TestService>>(
    tree,
    'test/helpers/service.ts',
    'startTestService',
  );
  const createTestUser = await exportOf<(service: TestService) => Promise<{ id: string; email: string }>>(
    tree,
    'test/helpers/users.ts',
    'createTestUser',
  );
  const tokenFor = await exportOf<(service: TestService, user: { id: string }, scopes: string[]) => Promise<string>>(
    tree,
    'test/helpers/users.ts',
    'tokenFor',
  );
  const service = await startTestService({ env });
  try {
    const user = await createTestUser(service);
    const token = await tokenFor(service, user, ['data:read']);
    return {
      service,
      userId: user.id,
      email: user.email,
      async get(path, accept) {
        const res = await fetch(service.url + path, {
          headers: { authorization: `Bearer ${token}`, ...(accept ? { accept } : {}) },
        });
        const body = await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${Buffer.from(body).toString().slice(0, 300)}`);
        return { body, type: res.headers.get('content-type') };
      },
      settle: async () => {
        await sql`VACUUM ANALYZE`.execute(service.deps.db);
      },
      close: () => service.close(),
    };
  } catch (err) {
    await service.close();
    throw err;
  }
}

/** `count` tasks run by `workers` at a time (seeding as the benches do it, four rides at once). */
export async function inParallel(count: number, workers: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = next++; i < count; i = next++) await task(i);
    }),
  );
}

/** A line on stderr (the driver's log) saying how long a family took to open on a tree. */
export function logOpened(family: string, tree: Tree, started: number, what: string): void {
  process.stderr.write(`${family}: opened on ${tree.root} in ${((performance.now() - started) / 1000).toFixed(1)} s (${what})\n`);
}
