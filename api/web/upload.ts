import type { Ctx } from '../http/context.ts';
import { MAX_FILES_PER_UPLOAD } from '../services/activities/upload.ts';
import { html } from './html.ts';
import { page } from './layout.ts';
import { headerOf, requireWebUser, sendHtml } from './web-common.ts';

/**
 * GET /upload: upload activity files and import a history archive in the browser. The page is a
 * shell; api/web/static/upload.js sends each file as its own request to the public
 * `POST /api/v1/activities/upload` (true per-file progress), follows each source at
 * `GET /api/v1/sources/{id}`, and sends a zip to `POST /api/v1/activities/backfill`, reading
 * `GET /api/v1/activities/backfill-status` (NDJSON) line by line.
 */

/** Sports offered for files that do not say theirs (a CSV without a `sport` column); the field is optional. */
const SPORTS: [value: string, label: string][] = [
  ['cycling', 'Cycling'],
  ['cycling.road', 'Cycling › road'],
  ['cycling.mountain', 'Cycling › mountain'],
  ['running', 'Running'],
  ['running.trail', 'Running › trail'],
  ['swimming', 'Swimming'],
  ['walking', 'Walking'],
  ['rowing', 'Rowing'],
  ['xc_skiing', 'Cross-country skiing'],
];

export const UPLOAD_EXTENSIONS = ['.fit', '.csv', '.gpx', '.tcx', '.fit.gz', '.csv.gz', '.gpx.gz', '.tcx.gz'];

function uploadPage(user: { name: string; units: 'metric' | 'imperial' }): string {
  return page(
    { title: 'Upload', user, scripts: ['/static/upload.js'], styles: ['/static/upload.css'] },
    html`<h1>Upload activities</h1>
<section class="upload" aria-labelledby="files-heading">
<h2 id="files-heading">Activity files</h2>
<form id="upload-form" class="stack" data-max-files="${MAX_FILES_PER_UPLOAD}" data-extensions="${UPLOAD_EXTENSIONS.join(' ')}">
  <div class="drop-zone" id="drop-zone">
    <p>Drop up to ${MAX_FILES_PER_UPLOAD} files here</p>
    <label for="files">or choose them</label>
    <input type="file" id="files" name="files" multiple accept=".fit,.csv,.gpx,.tcx,.gz">
    <p class="hint">FIT, CSV, GPX or TCX, optionally gzip-compressed (${UPLOAD_EXTENSIONS.join(', ')}); at most ${MAX_FILES_PER_UPLOAD} at a time. Each file is uploaded on its own, with its own progress.</p>
  </div>
  <label for="sport">Sport (optional)</label>
  <select id="sport" name="sport">
    <option value="">From the file</option>
    ${SPORTS.map(([value, label]) => html`<option value="${value}">${label}</option>`)}
  </select>
  <p class="hint">Needed for CSV files without a <code>sport</code> column; for FIT files it replaces only a generic sport.</p>
  <p class="error" role="alert" id="upload-error" hidden></p>
</form>
<p id="upload-summary" role="status" hidden></p>
<ul class="uploads" id="uploads" aria-live="polite"></ul>
</section>
<section class="upload" aria-labelledby="history-heading">
<h2 id="history-heading">History import</h2>
<p>A zip of your past activities (for example a training platform's bulk export): every .fit/.csv/.gpx/.tcx file in it, at any depth, is loaded, newest first. Files already uploaded are recognised and not loaded twice.</p>
<form id="history-form" class="stack">
  <label for="archive">Zip archive</label>
  <input type="file" id="archive" name="archive" accept=".zip,application/zip">
  <button type="submit" id="history-submit">Import history</button>
  <p class="error" role="alert" id="history-error" hidden></p>
</form>
<div id="history" class="history" hidden>
  <p><span id="history-name"></span> <progress id="history-progress" max="100" value="0" aria-label="Upload of the archive"></progress> <span id="history-percent">0 %</span></p>
  <p id="history-state" role="status"></p>
  <p>Loaded back to: <strong id="history-loaded-until">nothing yet</strong></p>
  <ul class="history-errors" id="history-errors"></ul>
</div>
</section>`,
  );
}

export async function showUpload(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  sendHtml(ctx, 200, uploadPage(headerOf(user)));
}
