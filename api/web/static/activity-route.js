// The activity's route as a plain SVG line (no map tiles: nothing is fetched from outside our origin).
// Positions are projected equirectangularly, longitudes scaled by the cosine of the route's middle
// latitude so distances look right away from the equator. Every recorded position is a point of the
// polyline (no decimation; rows without a position, pauses, are skipped). A marker follows the time
// series' cursor.

const SVG = 'http://www.w3.org/2000/svg';
/** Width of the drawing in SVG units; the height follows the route's aspect ratio. */
const UNITS = 1000;
const PAD = 20;

function svgEl(name, attrs) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** Rows with both a latitude and a longitude. */
export function positionRows(lat, lon) {
  const rows = [];
  for (let i = 0; i < lat.length; i++) if (lat[i] !== null && lon[i] !== null) rows.push(i);
  return rows;
}

/**
 * Draw the route into `container` (replacing what is there). Returns `{ svg, points, markAt(row) }`
 * or undefined when there is no position. `markAt(row)` moves the marker to the row's position
 * (hidden when that row has none or row is null).
 */
export function drawRoute(container, lat, lon) {
  const rows = positionRows(lat, lon);
  if (!rows.length) return undefined;
  let minLat = Infinity,
    maxLat = -Infinity,
    minLon = Infinity,
    maxLon = -Infinity;
  for (const i of rows) {
    minLat = Math.min(minLat, lat[i]);
    maxLat = Math.max(maxLat, lat[i]);
    minLon = Math.min(minLon, lon[i]);
    maxLon = Math.max(maxLon, lon[i]);
  }
  const k = Math.cos((((minLat + maxLat) / 2) * Math.PI) / 180);
  const spanX = Math.max((maxLon - minLon) * k, 1e-9);
  const spanY = Math.max(maxLat - minLat, 1e-9);
  const scale = (UNITS - 2 * PAD) / Math.max(spanX, spanY);
  const width = spanX * scale + 2 * PAD;
  const height = spanY * scale + 2 * PAD;
  const px = (i) => PAD + (lon[i] - minLon) * k * scale;
  const py = (i) => PAD + (maxLat - lat[i]) * scale; // north up

  const svg = svgEl('svg', {
    viewBox: `0 0 ${width.toFixed(1)} ${height.toFixed(1)}`,
    role: 'img',
    'aria-label': 'Route',
    class: 'route-map',
  });
  const points = rows.map((i) => `${px(i).toFixed(1)},${py(i).toFixed(1)}`).join(' ');
  svg.append(svgEl('polyline', { points, class: 'route-line', 'vector-effect': 'non-scaling-stroke' }));
  const first = rows[0];
  const last = rows[rows.length - 1];
  svg.append(
    svgEl('circle', { cx: px(last).toFixed(1), cy: py(last).toFixed(1), r: 12, class: 'route-end', 'vector-effect': 'non-scaling-stroke' }),
  );
  svg.append(
    svgEl('circle', {
      cx: px(first).toFixed(1),
      cy: py(first).toFixed(1),
      r: 12,
      class: 'route-start',
      'vector-effect': 'non-scaling-stroke',
    }),
  );
  const marker = svgEl('circle', {
    cx: 0,
    cy: 0,
    r: 14,
    class: 'route-cursor',
    'vector-effect': 'non-scaling-stroke',
    visibility: 'hidden',
  });
  svg.append(marker);
  container.replaceChildren(svg);
  container.dataset.points = String(rows.length);
  container.dataset.drawn = 'true';

  return {
    svg,
    points: rows.length,
    markAt(row) {
      if (row == null || lat[row] === null || lon[row] === null || lat[row] === undefined) {
        marker.setAttribute('visibility', 'hidden');
        return;
      }
      marker.setAttribute('cx', px(row).toFixed(1));
      marker.setAttribute('cy', py(row).toFixed(1));
      marker.setAttribute('visibility', 'visible');
    },
  };
}
