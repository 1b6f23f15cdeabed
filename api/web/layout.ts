import { html, type Html } from './html.ts';

export interface PageOptions {
  title: string;
  /** The signed-in user's display name, shown in the header with a sign-out button, and their units (the body's `data-units`, read by the pages' scripts). */
  user?: { name: string; units?: 'metric' | 'imperial'; acting?: { name: string; canWrite: boolean } | undefined } | undefined;
  /** Scripts of the page, from /static (ES modules, loaded deferred). */
  scripts?: string[];
  /** Stylesheets beyond site.css (e.g. `/static/vendor/uPlot.min.css`). */
  styles?: string[];
  /** Load uPlot (/static/vendor/uPlot.iife.min.js, global `uPlot`) and its stylesheet before the page's scripts. */
  charts?: boolean;
}

export function page(opts: PageOptions, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · Training data service</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/site.css">
${
  opts.charts
    ? html`<link rel="stylesheet" href="/static/vendor/uPlot.min.css">
<script src="/static/vendor/uPlot.iife.min.js" defer></script>`
    : ''
}
${(opts.styles ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}
${(opts.scripts ?? []).map((src) => html`<script type="module" src="${src}"></script>`)}
</head>
<body data-units="${opts.user?.units ?? 'metric'}">
<header class="site">
  <a class="brand" href="/">Training data service</a>
  <input type="checkbox" id="site-menu-toggle" class="menu-toggle" aria-controls="site-nav" aria-label="Menu">
  <label for="site-menu-toggle" class="menu-button" aria-hidden="true">Menu</label>
  <nav id="site-nav" aria-label="Site">
    ${
      opts.user
        ? html`<a href="/activities">Activities</a>
        <a href="/curves">Curves</a>
        <a href="/tests">Tests</a>
        <a href="/data">Traces and dailies</a>
        <a href="/upload">Upload</a>
        <a href="/settings" class="account" id="header-account">${opts.user.name}</a>
        <form method="post" action="/signout" class="inline"><button type="submit" class="link">Sign out</button></form>`
        : html`<a href="/signin">Sign in</a> <a href="/signup">Sign up</a>`
    }
    <a href="/docs">API docs</a>
  </nav>
</header>
${
  opts.user?.acting
    ? html`<div class="acting-banner" id="acting-banner" role="alert">
<p>You are acting as <strong>${opts.user.acting.name}</strong> (${opts.user.acting.canWrite ? 'read and write' : 'read only'}): the activities, curves, tests, data and thresholds pages show theirs.</p>
<form method="post" action="/act-as/stop" class="inline"><button type="submit" id="stop-acting">Back to your own account</button></form>
</div>`
    : ''
}
<main>
${body}
</main>
</body>
</html>`.value;
}

/** An error page; `user` (the signed-in user, when the request has a valid session) is shown in the header. */
export function errorPage(status: number, message: string, user?: { name: string }): string {
  return page(
    { title: `Error ${status}`, user },
    html`<h1>Error ${status}</h1><p class="error" role="alert">${message}</p><p><a href="/">Home</a></p>`,
  );
}

/** A labelled input; `error` renders next to it and marks it invalid. */
export function field(f: {
  name: string;
  label: string;
  type?: string;
  value?: string;
  autocomplete?: string;
  /** The id of a <datalist> suggesting values. */
  list?: string;
  error?: string | undefined;
  required?: boolean;
  /** A sentence under the field on what it accepts (its id: `<name>-hint`). */
  hint?: string;
}): Html {
  const describedBy = [f.hint ? `${f.name}-hint` : '', f.error ? `${f.name}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${f.name}">${f.label}</label>
<input id="${f.name}" name="${f.name}" type="${f.type ?? 'text'}" value="${f.value ?? ''}"
  ${f.autocomplete ? html`autocomplete="${f.autocomplete}"` : ''} ${f.list ? html`list="${f.list}"` : ''} ${f.required === false ? '' : html`required`}
  ${f.error ? html`aria-invalid="true"` : ''} ${describedBy ? html`aria-describedby="${describedBy}"` : ''}>
${f.hint ? html`<p class="field-hint muted" id="${f.name}-hint">${f.hint}</p>` : ''}
${f.error ? html`<p class="field-error" id="${f.name}-error">${f.error}</p>` : ''}`;
}

export function formError(message: string | undefined): Html {
  return message ? html`<p class="error" role="alert">${message}</p>` : html``;
}

const SETTINGS_SECTIONS: [href: string, label: string][] = [
  ['/settings', 'Account'],
  ['/settings/applications', 'API applications'],
  ['/settings/thresholds', 'Thresholds'],
  ['/settings/tokens', 'Personal tokens'],
  ['/settings/connections', 'Connected applications'],
  ['/settings/teams', 'Teams'],
  ['/settings/managed-users', 'Managed users'],
];

/** The links between the settings pages; `current` is the path of the page showing it. */
export function settingsNav(current: string): Html {
  return html`<nav class="settings-nav" aria-label="Settings">${SETTINGS_SECTIONS.map(
    ([href, label]) => html`<a href="${href}"${href === current ? html` aria-current="page"` : ''}>${label}</a>`,
  )}</nav>`;
}
