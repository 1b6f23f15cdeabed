// The upload page (/upload): activity files and a history import, through the public API with the
// session cookie. Each file is its own POST /api/v1/activities/upload (XMLHttpRequest, for upload
// progress per file; two at a time), then its source is polled every second until processed or
// failed. A zip goes to POST /api/v1/activities/backfill; its progress is read from the NDJSON
// stream GET /api/v1/activities/backfill-status, line by line, reconnecting until it completes.

import { apiJson, ApiError } from './api-client.js';

const POLL_MS = 1000;
const PARALLEL_UPLOADS = 2;

const form = document.getElementById('upload-form');
const input = document.getElementById('files');
const dropZone = document.getElementById('drop-zone');
const sportSelect = document.getElementById('sport');
const uploadError = document.getElementById('upload-error');
const list = document.getElementById('uploads');
const uploadSummary = document.getElementById('upload-summary');
const MAX_FILES = Number(form.dataset.maxFiles);
const EXTENSIONS = form.dataset.extensions.split(' ');

// Helpers ----------------------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

function showError(target, message) {
  target.textContent = message;
  target.hidden = !message;
}

function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The API's `detail`: a sentence, or a list of `{loc, msg}` items. */
function detailText(detail) {
  if (Array.isArray(detail)) return detail.map((d) => d?.msg ?? JSON.stringify(d)).join('; ');
  if (typeof detail === 'string') return detail;
  return detail === undefined ? '' : JSON.stringify(detail);
}

function failureText(status, body) {
  if (status === 401) return 'Your session has ended: sign in again, then upload the file again.';
  if (status === 0) return 'The upload did not reach the server (network error).';
  const detail = detailText(body?.detail ?? body);
  return `${status === 413 ? 'Too large' : `Refused (${status})`}${detail ? `: ${detail}` : ''}`;
}

/** POST a multipart form with XMLHttpRequest (fetch has no upload progress); resolves with status and parsed body. */
function postWithProgress(url, formData, onProgress) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.withCredentials = true;
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      let body;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        body = xhr.responseText;
      }
      resolve({ status: xhr.status, body });
    });
    xhr.addEventListener('error', () => resolve({ status: 0, body: undefined }));
    xhr.addEventListener('abort', () => resolve({ status: 0, body: undefined }));
    xhr.send(formData);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Activity files ---------------------------------------------------------------------------------

function hasAllowedExtension(name) {
  const lower = name.toLowerCase();
  return EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** Why this selection is refused as a whole, or '' when it may be uploaded. */
function refusal(files) {
  if (files.length > MAX_FILES) return `You chose ${files.length} files: upload at most ${MAX_FILES} at a time. Nothing was uploaded.`;
  const wrong = files.filter((f) => !hasAllowedExtension(f.name));
  if (wrong.length) {
    return `Not a ${EXTENSIONS.join(', ')} file: ${wrong.map((f) => f.name).join(', ')}. Nothing was uploaded.`;
  }
  return '';
}

/** One row of the list: a file's progress, then its source's status. */
class UploadRow {
  constructor(file) {
    this.file = file;
    this.progress = el('progress', { max: '100', value: '0', 'aria-label': `Upload of ${file.name}` });
    this.percent = el('span', { class: 'percent', text: '0 %' });
    this.status = el('span', { class: 'status', text: 'Waiting' });
    this.result = el('div', { class: 'result' });
    this.node = el(
      'li',
      { class: 'upload-item', 'data-file': file.name, 'data-state': 'waiting' },
      el(
        'div',
        { class: 'file' },
        el('span', { class: 'file-name', text: file.name }),
        ' ',
        el('span', { class: 'muted', text: bytes(file.size) }),
      ),
      el('div', { class: 'bar' }, this.progress, ' ', this.percent, ' ', this.status),
      this.result,
    );
  }

  setState(state, text) {
    this.node.dataset.state = state;
    this.status.textContent = text;
  }

  setProgress(fraction) {
    const pct = Math.round(fraction * 100);
    this.progress.value = pct;
    this.percent.textContent = `${pct} %`;
  }

  fail(message, code) {
    this.setState('failed', 'Failed');
    this.result.replaceChildren(
      el(
        'p',
        { class: 'error' },
        code ? el('code', { class: 'error-code', text: code }) : '',
        code ? ': ' : '',
        el('span', { class: 'error-message', text: message }),
      ),
    );
  }

  processed(activityIds) {
    this.setState(this.duplicate ? 'duplicate' : 'processed', this.duplicate ? 'Already uploaded' : 'Processed');
    const links = activityIds.map((id, i) =>
      el('a', {
        href: `/activities/${id}`,
        class: 'activity-link',
        text: activityIds.length > 1 ? `Activity ${i + 1}` : 'Open the activity',
      }),
    );
    const p = el('p', { class: 'notice' });
    if (this.duplicate) p.append('The same file was uploaded before; nothing new was added. ');
    if (links.length) links.forEach((a, i) => p.append(...(i ? [', ', a] : [a])));
    else p.append(this.duplicate ? 'It has no activity.' : 'Processed: no activity in this file.');
    this.result.replaceChildren(p);
  }
}

async function uploadOne(row, sport) {
  row.setState('uploading', 'Uploading');
  const data = new FormData();
  data.append('files', row.file, row.file.name);
  if (sport) data.append('sport', sport);
  const { status, body } = await postWithProgress('/api/v1/activities/upload', data, (f) => row.setProgress(f));
  const source = body?.sources?.[0];
  if (status !== 202 || !source) return row.fail(failureText(status, body));
  row.setProgress(1);
  row.node.dataset.sourceId = source.id;
  row.duplicate = source.duplicate === true;
  await follow(row, source);
}

/** Poll the source until it is processed or failed. */
async function follow(row, source) {
  let misses = 0;
  for (;;) {
    if (source.status === 'processed') return row.processed(source.activity_ids ?? []);
    if (source.status === 'failed') return row.fail(source.error?.message ?? 'The file could not be processed.', source.error?.code);
    row.setState('processing', 'Processing');
    await sleep(POLL_MS);
    try {
      source = await apiJson(`/api/v1/sources/${encodeURIComponent(source.id)}`);
      misses = 0;
    } catch (err) {
      if (err instanceof ApiError && err.status >= 400 && err.status < 500)
        return row.fail(failureText(err.status, { detail: err.detail }));
      // A network blip or a 503 while a dependency restarts: keep asking for a while.
      if (++misses > 30) return row.fail('Lost track of this file; its status is on the Activities page once processed.');
    }
  }
}

async function uploadAll(files) {
  const sport = sportSelect.value;
  const rows = files.map((f) => new UploadRow(f));
  list.prepend(...rows.map((r) => r.node));
  const queue = [...rows];
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) await uploadOne(row, sport);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_UPLOADS, rows.length) }, worker));
  showSummary(rows);
}

/** One line on the files chosen together: how many were new, already uploaded, or failed. */
function showSummary(rows) {
  const count = (state) => rows.filter((r) => r.node.dataset.state === state).length;
  const parts = [
    [count('processed'), 'new'],
    [count('duplicate'), 'already uploaded'],
    [count('failed'), 'failed'],
  ].filter(([n]) => n > 0);
  const files = rows.length === 1 ? '1 file' : `${rows.length} files`;
  uploadSummary.textContent = `${files}: ${parts.map(([n, what]) => `${n} ${what}`).join(', ')}.`;
  uploadSummary.hidden = false;
}

function chosen(fileList) {
  const files = [...(fileList ?? [])];
  if (!files.length) return;
  const why = refusal(files);
  showError(uploadError, why);
  if (!why) void uploadAll(files);
}

input.addEventListener('change', () => {
  chosen(input.files);
  input.value = ''; // the same file may be chosen again
});

for (const type of ['dragenter', 'dragover']) {
  dropZone.addEventListener(type, (e) => {
    e.preventDefault();
    dropZone.classList.add('dragging');
  });
}
dropZone.addEventListener('dragleave', () => dropZone.classList.remove('dragging'));
dropZone.addEventListener('drop', (e) => {
  e.preventDefault();
  dropZone.classList.remove('dragging');
  chosen(e.dataTransfer?.files);
});
// A file dropped beside the zone must not replace the page with the file.
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => e.preventDefault());
form.addEventListener('submit', (e) => e.preventDefault());

// History import ---------------------------------------------------------------------------------

const historyForm = document.getElementById('history-form');
const archiveInput = document.getElementById('archive');
const historyButton = document.getElementById('history-submit');
const historyError = document.getElementById('history-error');
const history = document.getElementById('history');
const historyProgress = document.getElementById('history-progress');
const historyPercent = document.getElementById('history-percent');
const historyState = document.getElementById('history-state');
const loadedUntil = document.getElementById('history-loaded-until');
const historyErrors = document.getElementById('history-errors');

function setHistoryState(state, text) {
  history.dataset.state = state;
  historyState.textContent = text;
}

historyForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const archive = archiveInput.files?.[0];
  if (!archive) return showError(historyError, 'Choose a zip archive first.');
  if (!archive.name.toLowerCase().endsWith('.zip')) return showError(historyError, `${archive.name} is not a .zip archive.`);
  showError(historyError, '');
  historyButton.disabled = true;
  history.hidden = false;
  historyErrors.replaceChildren();
  loadedUntil.textContent = 'nothing yet';
  document.getElementById('history-name').textContent = archive.name;
  setHistoryState('uploading', 'Uploading the archive…');
  const data = new FormData();
  data.append('archive', archive, archive.name);
  const { status, body } = await postWithProgress('/api/v1/activities/backfill', data, (f) => {
    historyProgress.value = Math.round(f * 100);
    historyPercent.textContent = `${Math.round(f * 100)} %`;
  });
  if (status !== 202) {
    historyButton.disabled = false;
    setHistoryState('failed', failureText(status, body));
    return;
  }
  historyProgress.value = 100;
  historyPercent.textContent = '100 %';
  setHistoryState('importing', 'Importing: files are loaded newest first.');
  await watchHistory();
  historyButton.disabled = false;
});

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * A completed import's counts in words: `12 activity files (FIT 10, GPX 2): 9 new, 2 already uploaded, 1 failed (listed below);
 * 1 other entry skipped (…)`, the formats when there are several, and a Strava export's rows without a file.
 */
function filesText(f) {
  const parts = [
    [f.loaded, 'new'],
    [f.already_stored, 'already uploaded'],
    [f.failed, 'failed (listed below)'],
  ].filter(([n]) => n > 0);
  const formats = Object.entries(f.formats ?? {});
  const byFormat = formats.length > 1 ? ` (${formats.map(([format, c]) => `${format.toUpperCase()} ${c.found}`).join(', ')})` : '';
  const found = `${plural(f.found, 'activity file')}${byFormat}${parts.length ? `: ${parts.map(([n, what]) => `${n} ${what}`).join(', ')}` : ''}`;
  const csv = f.activities_csv;
  const manual = csv?.without_file
    ? `; ${plural(csv.without_file, 'activity', 'activities')} of activities.csv without a file (entered by hand)`
    : '';
  return f.skipped
    ? `${found}; ${plural(f.skipped, 'other entry', 'other entries')} skipped (not FIT, GPX, TCX or CSV, unsafe name, or too large)${manual}`
    : `${found}${manual}`;
}

/** `2025-01-03T08:00:00` (naive local) as `2025-01-03 08:00`. */
const localText = (naive) => naive.slice(0, 16).replace('T', ' ');

/**
 * Read backfill-status streams until the import is over. A stream ends when the backfill completes
 * or after a minute; a completed backfill's stream ends right after its first status line, so a
 * stream that gave a single status line means done, and a longer one is followed by another.
 */
async function watchHistory() {
  const seen = new Set();
  let emptyStreams = 0;
  let files; // what became of the files: on a completed import's last line
  for (;;) {
    let statusLines = 0;
    let ended = false;
    try {
      const res = await fetch('/api/v1/activities/backfill-status', {
        credentials: 'same-origin',
        headers: { accept: 'application/x-ndjson' },
      });
      if (!res.ok) {
        let body;
        try {
          body = await res.json();
        } catch {
          body = undefined;
        }
        setHistoryState('failed', failureText(res.status, body));
        return;
      }
      for await (const line of ndjsonLines(res.body)) {
        if ('error' in line) {
          if (seen.has(line.error)) continue;
          seen.add(line.error);
          historyErrors.append(el('li', { class: 'error', text: line.error }));
        } else if ('backfill_loaded_until' in line) {
          statusLines++;
          if (line.backfill_loaded_until) loadedUntil.textContent = localText(line.backfill_loaded_until);
          if (line.files) files = line.files;
        }
      }
      ended = true;
    } catch {
      // The connection dropped: read the next stream.
    }
    if (ended && statusLines === 1) break;
    if (statusLines === 0 && ++emptyStreams > 5) {
      setHistoryState('failed', 'The import progress is not available right now; the import goes on: see Activities later.');
      return;
    }
    if (statusLines === 0) await sleep(2000);
  }
  const failed = historyErrors.children.length;
  setHistoryState(
    'completed',
    files
      ? `Import complete. ${filesText(files)}.`
      : `Import complete${failed ? `: ${plural(failed, 'file')} could not be loaded (listed below)` : ''}.`,
  );
  historyState.append(' ', el('a', { href: '/activities', text: 'See your activities' }));
}

/** The JSON objects of an NDJSON body, as they arrive. */
async function* ndjsonLines(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffered += value;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (text) yield JSON.parse(text);
    }
    if (done) break;
  }
  if (buffered.trim()) yield JSON.parse(buffered);
}
