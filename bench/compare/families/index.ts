import type { Family } from '../row.ts';
import { backfillStagesFamily } from './backfill-stages.ts';
import { curvesFamily } from './curves.ts';
import { engineFamily } from './engine.ts';
import { httpFamily } from './http.ts';
import { ingestFamily } from './ingest.ts';
import { longitudinalFamily } from './longitudinal.ts';
import { webFamily } from './web.ts';

/** Every family of rows `npm run bench -- compare` knows, by the benchmark name it mirrors. */
export const FAMILIES: Record<string, Family> = {
  engine: engineFamily,
  curves: curvesFamily,
  longitudinal: longitudinalFamily,
  ingest: ingestFamily,
  'backfill-stages': backfillStagesFamily,
  http: httpFamily,
  web: webFamily,
};
