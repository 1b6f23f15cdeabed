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
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => chart.setSize({ width: width(), height: chart.height }));
  });
  return chart;
}

/** `1:02:03`, `2:03` or `45 s` for a duration in seconds (axis labels, hover). */
export function formatDuration(seconds) {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
