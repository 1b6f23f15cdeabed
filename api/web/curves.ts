import type { Ctx } from '../http/context.ts';
import { html } from './html.ts';
import { page } from './layout.ts';
import { headerOf, requireWebUser, sendHtml } from './web-common.ts';

/**
 * GET /curves: the shell of the curves page. The browser module (static/curves.js) reads the
 * choices from the URL query, fetches the longitudinal mean-max curves, the intensity-duration model
 * (and with it the newest lab test, drawn by static/test-curve.js) and the user's sports from the public API with the session cookie, and draws them.
 */
export async function showCurves(ctx: Ctx) {
  const user = await requireWebUser(ctx, ctx.url);
  if (!user) return;
  sendHtml(
    ctx,
    200,
    page(
      {
        title: 'Curves',
        user: headerOf(user),
        charts: true,
        styles: ['/static/chart-pages.css'],
        scripts: ['/static/curves.js'],
      },
      html`<div class="curves-page">
<h1>Curves</h1>
<p class="muted">Your best sustained power or speed for every duration, over the activities of a sport in a date range.</p>
<noscript><p class="error">The charts need JavaScript.</p></noscript>
<div id="curves-empty" hidden>
  <p>No activities yet, so there is no curve to draw. <a href="/upload">Upload your files</a> or <a href="/apps">connect an app</a> that sends them.</p>
</div>
<div id="curves-main">
<form id="curve-controls" class="curve-controls">
  <div class="control"><label for="sport">Sport</label><select id="sport" name="sport"></select></div>
  <div class="control"><label for="metric">Metric</label><select id="metric" name="metric"><option value="power">Power</option><option value="speed">Speed</option></select></div>
  <fieldset class="control-wide">
    <legend>Range</legend>
    <div id="range-presets" class="presets" role="group" aria-label="Range presets">
      <button type="button" data-range="6w">Last 6 weeks</button>
      <button type="button" data-range="90d">90 days</button>
      <button type="button" data-range="year">This year</button>
      <button type="button" data-range="all">All time</button>
    </div>
    <div class="dates">
      <label for="start">From</label><input type="date" id="start" name="start">
      <label for="end">to</label><input type="date" id="end" name="end">
    </div>
  </fieldset>
  <fieldset class="control-wide">
    <legend>Compare with</legend>
    <select id="compare" name="compare" aria-label="Second range">
      <option value="none">Nothing</option>
      <option value="6w">Last 6 weeks</option>
      <option value="90d">Last 90 days</option>
      <option value="year">This year</option>
      <option value="all">All time</option>
      <option value="custom">Dates…</option>
    </select>
    <div id="compare-dates" class="dates" hidden>
      <label for="compare-start">From</label><input type="date" id="compare-start" name="compare_start">
      <label for="compare-end">to</label><input type="date" id="compare-end" name="compare_end">
    </div>
  </fieldset>
  <div class="control">
    <label for="after">Fatigue states (<span id="after-unit">kJ</span> before)</label>
    <input id="after" name="after" inputmode="decimal" placeholder="e.g. 500, 1000" aria-describedby="after-hint">
    <p class="hint" id="after-hint">Up to 5: each draws what you held after that much work (kJ) or distance (m), within a year.</p>
    <div><button type="button" id="after-defaults" class="small secondary">Typical: <span id="after-typical">500, 1000, 1500 kJ</span></button></div>
    <label for="after-by">Fatigue curves by</label>
    <select id="after-by" name="after_by" aria-describedby="after-by-hint">
      <option value="duration">Duration (sampled)</option>
      <option value="intensity">Intensity (every level)</option>
    </select>
    <p class="hint" id="after-by-hint">Duration: sampled (every second to 3 min, then coarser). Intensity: every level (1 W, 0.01 m/s); speed's only way.</p>
  </div>
  <fieldset class="control">
    <legend>View</legend>
    <div class="check"><input type="radio" id="view-duration" name="view" value="duration" checked><label for="view-duration">By duration</label></div>
    <div class="check"><input type="radio" id="view-value" name="view" value="value"><label for="view-value">By intensity (value-indexed)</label></div>
  </fieldset>
  <div class="check control"><input type="checkbox" id="model" name="model"><label for="model">Intensity-duration model</label></div>
  <div class="check control"><input type="checkbox" id="lab-test" name="test"><label for="lab-test">Newest lab test (critical power or speed)</label></div>
</form>
<p id="curve-status" role="status" aria-live="polite"></p>
<p id="curve-way" hidden></p>
<div id="curve-chart" class="chart" aria-label="Curve chart"></div>
<ul id="curve-readout" class="readout" aria-live="polite"></ul>
<p id="test-note" class="muted" hidden></p>
<section id="model-section" hidden>
  <h2>Intensity-duration model</h2>
  <dl id="model-parameters"></dl>
  <p id="model-note" class="muted"></p>
</section>
</div>
</div>`,
    ),
  );
}
