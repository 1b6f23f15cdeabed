import { defineRoute } from '../../../http/route.ts';
import { ZonesBody, ZonesOut } from '../../../services/training-load/model.ts';
import { recomputeLoad } from '../../../services/training-load/recompute.ts';
import { replaceZones, zoneSettings, type ZoneSettings } from '../../../../db/training-load.ts';
import { defaultZoneModel, ZONE_METRICS, ZONE_THRESHOLD } from '../../../../engine/load/zones.ts';
import { rootSport } from '../../../../lib/sports.ts';
import { UnprocessableEntity } from '../../../services/errors.ts';

/** The sports whose default models differ, shown even before any edit. */
const SHOWN_SPORTS = ['cycling', 'running', 'swimming'];

function zonesOut(settings: ZoneSettings) {
  const sports = [...new Set([...SHOWN_SPORTS, ...Object.keys(settings)])].sort();
  return {
    zones: sports.flatMap((sport) =>
      ZONE_METRICS.map((metric) => {
        const edited = settings[sport]?.[metric];
        const model = edited ? { model: 'custom', zones: edited } : defaultZoneModel(sport, metric);
        return { sport, metric, model: model.model, threshold: ZONE_THRESHOLD[metric], zones: model.zones };
      }),
    ),
  };
}

const DESCRIPTION =
  'Per sport and metric, the zones: names and lower bounds as % of the threshold (power: critical power; heart rate: threshold heart rate; ' +
  "speed: critical speed). Defaults: `coggan` (Coggan's seven power levels, GoldenCheetah's default power zones: 0, 55, 75, 90, 105, 120, 150 % of CP), " +
  "`friel-cycling` / `friel-running` (Joe Friel's seven heart-rate zones: 0, 81, 90, 94, 100, 103, 106 % of threshold heart rate for cycling; 0, 85, 90, 95, " +
  "100, 103, 106 for the other sports), `goldencheetah-pace-running` / `goldencheetah-pace-swimming` (GoldenCheetah's default pace zones: 0, 80, 87, 95, " +
  '105, 119 % of critical speed; swimming 0, 93, 97, 99, 102, 109). A sample is in the zone whose lower bound it reaches and the next one it does not. ' +
  'Sports other than those listed use the running models for heart rate and speed.';

export const getZonesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/zones',
    operationId: 'get_zones',
    summary: 'The training zones of each sport',
    description: DESCRIPTION,
    tags: ['profile'],
    auth: { scopes: ['data:read'] },
    responses: { 200: { description: 'The zone models', schema: ZonesOut } },
  },
  async (ctx) => {
    ctx.body = zonesOut(await zoneSettings(ctx.deps.db, ctx.state.principal!.userId));
  },
);

export const putZonesRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/profile/zones',
    operationId: 'put_zones',
    summary: 'Edit zone boundaries',
    description:
      `${DESCRIPTION} The body lists the edited models (each replaces its sport's and metric's default; the first zone starts at 0, bounds increase); ` +
      'what it leaves out is the default again. The time in zones of the sports whose zones changed is computed again in the background.',
    tags: ['profile'],
    auth: { scopes: ['data:write'] },
    body: ZonesBody,
    responses: { 200: { description: 'The zone models', schema: ZonesOut } },
  },
  async (ctx, { body }) => {
    const userId = ctx.state.principal!.userId;
    const settings: ZoneSettings = {};
    body.zones.forEach((z, i) => {
      const root = rootSport(z.sport) ?? z.sport;
      if (root !== z.sport || settings[root]?.[z.metric]) {
        throw new UnprocessableEntity([
          {
            loc: ['body', 'zones', i, 'sport'],
            msg: root !== z.sport ? `Zones are set per root sport: ${root}, not ${z.sport}` : `${root} ${z.metric} is listed twice`,
            type: 'value_error.sport',
          },
        ]);
      }
      settings[root] = { ...settings[root], [z.metric]: z.zones };
    });
    if (await replaceZones(ctx.deps.db, userId, settings)) await recomputeLoad(ctx.deps, userId);
    ctx.body = zonesOut(settings);
  },
);
