import { html, type Html } from './html.ts';

/** The sizes an application's icon is shown at (each has its box in site.css). */
export type IconSize = 48 | 64 | 96;

/** Pages showing application icons load this: it uncovers the initial behind an image that fails to load. */
export const APP_ICON_SCRIPT = '/static/app-icons.js';

/**
 * An application's image, with its initial in a styled box behind it: when the image URL fails to
 * load, /static/app-icons.js hides the image (no inline handler under the CSP) and the initial shows.
 * Nothing when the application has no image.
 */
export function appIcon(app: { name: string; image: string | null }, size: IconSize): Html {
  if (!app.image) return html``;
  const initial = Array.from(app.name.trim())[0]?.toUpperCase() ?? '?';
  return html`<span class="app-icon-frame icon-${size}"><span class="app-icon-fallback" aria-hidden="true">${initial}</span><img src="${app.image}" alt="" class="app-icon" width="${size}" height="${size}"></span>`;
}
