import type { Ctx } from '../http/context.ts';
import { currentWebUser } from '../http/web-session.ts';
import { html } from './html.ts';
import { page } from './layout.ts';
import { headerOf, sendHtml } from './web-common.ts';

/** The fitness chart's ranges (static/home.js reads `data-range`). */
const FITNESS_RANGES: [range: string, label: string][] = [
  ['90d', '90 days'],
  ['6m', '6 months'],
  ['1y', '1 year'],
  ['all', 'All'],
  ['custom', 'Dates'],
];

/**
 * GET /: for a signed-in person, their latest activities, the fitness chart (the last 90 days, other
 * ranges a click away), the 90-day curve and this week against the template week, drawn by
 * static/home.js from the public API; with no activity yet, what to do first (upload, connect an
 * app, create a token). Signed out: what the service is, and where to sign in.
 */
export async function home(ctx: Ctx) {
  const user = await currentWebUser(ctx);
  if (!user) {
    sendHtml(
      ctx,
      200,
      page(
        { title: 'Home' },
        html`<h1>Training data service</h1>
<p>Your activities, traces and daily measures, served to the applications you choose.</p>
<p><a href="/signup">Create an account</a> or <a href="/signin">sign in</a>.</p>
<p>Developers: the <a href="/docs">API documentation</a> and the <a href="/openapi.json">OpenAPI document</a>.</p>`,
      ),
    );
    return;
  }
  sendHtml(
    ctx,
    200,
    page(
      { title: 'Home', user: headerOf(user), charts: true, styles: ['/static/chart-pages.css'], scripts: ['/static/home.js'] },
      html`<div class="chart-page home">
<h1>Hello, ${user.first_name}</h1>
<p id="home-status" role="status"></p>
<section id="home-start" hidden aria-labelledby="home-start-heading">
  <h2 id="home-start-heading">Get started</h2>
  <p>No activities yet. Bring your training in one of these ways:</p>
  <ol class="start-steps">
    <li><a id="start-upload" href="/upload">Upload your files</a>: up to 10 <code>.fit</code>, <code>.csv</code>, <code>.gpx</code> or <code>.tcx</code> files at a time, or a zip of your history.</li>
    <li><a id="start-apps" href="/apps">Connect an app</a> that sends your training here.</li>
    <li><a id="start-token" href="/settings/tokens">Create a personal token</a> for your own scripts, and read the <a href="/docs">API docs</a>.</li>
  </ol>
</section>
<div id="home-training" hidden>
<section aria-labelledby="latest-heading">
  <h2 id="latest-heading">Latest activities</h2>
  <ul id="latest-activities" class="latest"></ul>
  <p><a href="/activities">All activities</a> · <a href="/upload">Upload more</a></p>
</section>
<section aria-labelledby="fitness-heading" id="fitness">
  <h2 id="fitness-heading">Fitness, fatigue and form</h2>
  <div id="fitness-controls" class="fitness-controls">
    <div class="presets" id="fitness-ranges" role="group" aria-label="Days shown">
      ${FITNESS_RANGES.map(([range, label]) => html`<button type="button" data-range="${range}" aria-pressed="${range === '90d' ? 'true' : 'false'}">${label}</button>`)}
    </div>
    <form id="fitness-dates" class="dates" hidden>
      <label for="fitness-start">From</label><input type="date" id="fitness-start" required>
      <label for="fitness-end">to</label><input type="date" id="fitness-end" required>
      <button type="submit" class="small" id="fitness-show">Show</button>
    </form>
  </div>
  <p id="fitness-status" class="muted" role="status"></p>
  <p id="fitness-empty" hidden>No training stress yet: it is computed from your thresholds (critical power, threshold pace or heart rates). Set them in <a href="/settings/thresholds" id="fitness-thresholds-link">Settings → Thresholds</a>, and your activities get their training stress and this chart.</p>
  <div id="fitness-chart" class="chart fitness-chart"></div>
  <p id="fitness-readout" class="readout fitness-readout" aria-live="polite"></p>
  <dl class="fitness-legend" id="fitness-legend">
    <dt><span class="swatch stress"></span>Stress</dt><dd>Each day's training stress, its activities' scores summed (bars, right axis): an hour all out at threshold scores 100.</dd>
    <dt><span class="swatch ctl"></span>Fitness</dt><dd>Chronic training load (CTL): the daily stress averaged over about six weeks (42-day exponential average).</dd>
    <dt><span class="swatch atl"></span>Fatigue</dt><dd>Acute training load (ATL): the same over about a week (7 days).</dd>
    <dt><span class="swatch tsb"></span>Form</dt><dd>Training stress balance (TSB): yesterday's fitness minus fatigue; positive when fresh, negative while training hard.</dd>
  </dl>
</section>
<section aria-labelledby="home-curve-heading">
  <h2 id="home-curve-heading">Best efforts of the last 90 days</h2>
  <p id="home-curve-status" class="muted" role="status"></p>
  <div id="home-curve-chart" class="chart"></div>
  <ul id="home-curve-readout" class="readout"></ul>
  <p><a id="home-curve-link" href="/curves?range=90d">Open in Curves</a></p>
</section>
<section aria-labelledby="home-week-heading">
  <h2 id="home-week-heading">This week against your template week</h2>
  <p class="muted">Hours of training per day this week (Monday to today), beside the average day of the 12 weeks before.</p>
  <p id="home-week-status" class="muted" role="status" hidden></p>
  <div id="home-week-chart" class="chart"></div>
</section>
</div>
</div>`,
    ),
  );
}
