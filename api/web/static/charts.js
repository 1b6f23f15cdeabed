// Charts of the web app, drawn with uPlot (loaded by the page as the global `uPlot`, from our own
// origin). Every chart is registered on its container element as `container.chart` (the uPlot
// instance), so tests read what was drawn from the chart's state (`chart.data`, `chart.series`),
// not from pixels; `container.dataset.drawn` is set once the first draw completed.

/** Distinct, readable line colours, in the order series are added. */
export const PALETTE = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf', '#e377c2', '#7f7f7f', '#bcbd22'];

/**
 * A uPlot chart filling `container`'s width (and following it when the window resizes).
 * `options` are uPlot's; `height` defaults to 300 px.
 */
export function drawChart(container, options, data) {
  // Drawing again into the same container (another metric chosen) replaces the chart before.
  container.chart?.destroy();
  if (container.onChartResize) window.removeEventListener('resize', container.onChartResize);
  delete container.dataset.drawn;
  const width = () => Math.max(200, container.clientWidth);
  const chart = new uPlot(
    {
      width: width(),
      height: options.height ?? 300,
      ...options,
      hooks: {
        ...(options.hooks ?? {}),
        draw: [...(options.hooks?.draw ?? []), () => (container.dataset.drawn = 'true')],
      },
    },
    data,
    container,
  );
  container.chart = chart;
  let pending = 0;
  container.onChartResize = () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => chart.setSize({ width: width(), height: chart.height }));
  };
  window.addEventListener('resize', container.onChartResize);
  return chart;
}

/** Durations worth a tick on a log-duration axis (s): 1s, 2s, 5s, 10s, 30s, 1m, 2m, 5m, 10m, 20m, 1h, 2h, 5h, 10h, 1d. */
export const DURATION_TICKS = [1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 3600, 7200, 18000, 36000, 86400];

/** A uPlot log scale for durations in seconds (`scales: { x: logDurationScale() }`). */
export function logDurationScale() {
  return { distr: 3, log: 10 };
}

/** A uPlot axis for a log-duration scale: ticks at DURATION_TICKS within the range, labelled as formatDuration writes durations everywhere (`5 s`, `5:00`, `1:00:00`). */
export function logDurationAxis(overrides = {}) {
  const minGap = overrides.space ?? 24; // CSS px between labelled ticks
  return {
    splits: (u, axisIdx, min, max) => {
      const ticks = DURATION_TICKS.filter((d) => d >= min && d <= max);
      if (!ticks.length) return [min, max];
      // Thin the ticks to keep `minGap` px between them on this chart's size (log positions).
      const horizontal = u.axes[axisIdx].side % 2 === 0;
      const px = (horizontal ? u.bbox.width : u.bbox.height) / (devicePixelRatio || 1);
      const span = Math.log(max) - Math.log(min);
      if (!(px > 0) || !(span > 0)) return ticks;
      const kept = [];
      let last = -Infinity;
      for (const d of ticks) {
        const at = ((Math.log(d) - Math.log(min)) / span) * px;
        if (at - last >= minGap) {
          kept.push(d);
          last = at;
        }
      }
      return kept;
    },
    // uPlot's log axes label only powers of ten by default; every tick here gets its label.
    filter: (_u, splits) => splits,
    values: (_u, splits) => splits.map((s) => (s == null ? '' : formatDuration(s))),
    ...overrides,
  };
}

/** `1:02:03`, `2:03` or `45 s` for a duration in seconds: the one duration format of every page, axes, readouts and lists alike. */
export function formatDuration(seconds) {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
