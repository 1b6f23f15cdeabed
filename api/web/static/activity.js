// The activity page (/activities/{id}): reads the activity, its samples, mean-max curve and accumulated
// work duration from the public API (the endpoints third-party clients use, with the session cookie)
// and draws them: the time series of every recorded channel with its laps, the route, the curves.

import { apiFrame, apiJson } from './api-client.js';
import { formatDuration } from './charts.js';
import { TIME_SERIES_CHANNELS, channelsFor, drawTimeSeries } from './activity-timeseries.js';
import { drawRoute } from './activity-route.js';
import { drawAwd, drawMeanMax } from './activity-curves.js';
import { metricDisplay } from './units.js';
import { showTrainingLoad, withWPrimeBalance } from './activity-load.js';

const section = document.getElementById('activity-charts');
const id = section.dataset.activityId;
const base = `/api/v1/activities/${encodeURIComponent(id)}`;
const status = document.getElementById('charts-status');
/** The activity's sport, as the page writes it: speed reads as pace or speed by it. */
const sport = document.getElementById('activity-sport')?.textContent ?? null;

function showStatus(el, message, isError = false) {
  el.textContent = message;
  el.hidden = false;
  el.classList.toggle('error', isError);
}

const secondsSince = (t0) => (iso) => (iso == null ? null : (Date.parse(iso) - t0) / 1000);

async function main() {
  // The channels recorded come with the page, so the samples are fetched beside the activity.
  const recorded = new Set((section.dataset.metrics ?? '').split(',').filter(Boolean));
  const channels = channelsFor(
    TIME_SERIES_CHANNELS.filter((c) => recorded.has(c.key)),
    sport,
  );
  // The W′ balance (derived from power: nulls without critical power and W′) is charted under power.
  const extra = ['distance', 'latitude', 'longitude'].filter((k) => recorded.has(k));
  if (recorded.has('power')) extra.unshift('w_prime_balance');
  const metrics = [...channels.map((c) => c.key), ...extra].join(',');
  const [activity, frame] = await Promise.all([apiJson(base), metrics ? apiFrame(`${base}/data?metrics=${metrics}`) : undefined]);
  const elapsed = secondsSince(Date.parse(activity.start));
  const load = showTrainingLoad(activity, { base, sport }).catch(failLoad);

  let series;
  if (frame) {
    const x = frame.timestamp.map(elapsed);
    const laps = (activity.laps ?? []).map((lap) => ({ start: elapsed(lap.start), end: elapsed(lap.end) }));
    const container = document.getElementById('timeseries');
    if (channels.length) {
      series = drawTimeSeries(container, { x, frame, laps, channels: withWPrimeBalance(channels, frame) });
      container.dataset.rows = String(x.length);
    }
    const routeBox = document.getElementById('route');
    if (routeBox && frame.latitude && frame.longitude) {
      const route = drawRoute(routeBox, frame.latitude, frame.longitude);
      if (!route) showStatus(document.getElementById('route-status'), 'No position was recorded.');
      else series?.onCursor((row) => route.markAt(row));
    }
  }
  if (series) status.hidden = true;
  else showStatus(status, 'This activity has no channel to chart over time.');
  section.dataset.state = 'ready';

  await Promise.all([meanMax(elapsed, series), awd(), load]);
}

/** The training load section's failure, said in it (the charts go on). */
function failLoad(error) {
  const el = document.getElementById('load-status');
  if (el) showStatus(el, `Could not load the training stress: ${error.message}`, true);
  const box = document.getElementById('training-load');
  if (box) box.dataset.state = 'failed';
}

/** The mean-max panel: the metric chosen in its select; a click on a point zooms the time series to that best. */
async function meanMax(elapsed, series) {
  const box = document.getElementById('mean-max-chart');
  const select = document.getElementById('mean-max-metric');
  if (!box || !select) return;
  const caption = document.getElementById('best-window');
  const captionText = document.getElementById('best-window-text');
  const draw = async () => {
    const metric = select.value;
    const frame = await apiFrame(`${base}/mean-max?durations=all&metric=${metric}`);
    if (!frame.duration.length) {
      box.replaceChildren();
      return showStatus(document.getElementById('mean-max-status'), `No ${metricDisplay(metric, null).label.toLowerCase()} was recorded.`);
    }
    document.getElementById('mean-max-status').hidden = true;
    const startSeconds = frame.start.map(elapsed);
    const windowOf = (i) => ({ min: startSeconds[i], max: startSeconds[i] + frame.duration[i] });
    drawMeanMax(box, {
      frame,
      metric,
      sport,
      startSeconds,
      onHover: (i) => series?.highlight(i == null || startSeconds[i] == null ? null : windowOf(i)),
      onPick: (i) => {
        if (!series) return;
        const w = windowOf(i);
        series.zoomTo(w.min, w.max);
        const m = metricDisplay(metric, sport);
        captionText.textContent = `Best ${formatDuration(frame.duration[i])}: ${m.text(m.convert(frame[metric][i]))} ${m.unit}, from ${formatDuration(w.min)} to ${formatDuration(w.max)}.`;
        caption.hidden = false;
        section.scrollIntoView({ behavior: 'smooth', block: 'start' });
      },
    });
  };
  select.addEventListener('change', () => draw().catch(fail(document.getElementById('mean-max-status'))));
  document.getElementById('reset-zoom')?.addEventListener('click', () => {
    series?.reset();
    caption.hidden = true;
  });
  await draw();
}

/** The accumulated-work-duration panel for the metric chosen in its select. */
async function awd() {
  const box = document.getElementById('awd-chart');
  const select = document.getElementById('awd-metric');
  if (!box || !select) return;
  const note = document.getElementById('awd-status');
  const draw = async () => {
    const metric = select.value;
    const frame = await apiFrame(`${base}/accumulated-work-duration?metric=${metric}`);
    if (!frame.duration.length) {
      box.replaceChildren();
      return showStatus(note, `No ${metricDisplay(metric, null).label.toLowerCase()} was recorded.`);
    }
    note.hidden = true;
    drawAwd(box, { frame, metric });
  };
  select.addEventListener('change', () => draw().catch(fail(note)));
  await draw();
}

const fail = (el) => (error) => {
  showStatus(el, `Could not load the charts: ${error.message}`, true);
  section.dataset.state = 'failed';
};

main().catch(fail(status));
