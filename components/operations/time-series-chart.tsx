"use client";

import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatAxisTime, formatUtc } from "@/lib/format";

/**
 * One series over time, drawn by uPlot on a canvas: created on mount (never on the server), fed
 * new data with setData, resized with its container, rebuilt when the theme changes (uPlot draws
 * with concrete colours, read from the CSS variables), destroyed on unmount.
 */
export interface TimeSeriesChartProps {
  /** Epoch seconds, ascending. */
  xs: number[];
  ys: Array<number | null>;
  label: string;
  /** Formats a value for the axis and the legend. */
  format: (v: number) => string;
  style?: "line" | "bars";
  height?: number;
  testId: string;
  /** What the chart says, for screen readers and the title. */
  summary: string;
  /** The x axis in epoch seconds: the chart's whole range, whatever part of it has samples. */
  xRange?: [number, number];
}

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** "#1f5fbf" + alpha → "#1f5fbf33"; other colour forms are returned unchanged (no fill tint). */
function withAlpha(color: string, alpha: string): string | undefined {
  return /^#[0-9a-f]{6}$/i.test(color) ? `${color}${alpha}` : undefined;
}

/** `latest` gives the props of the last render: the axis range follows them without a rebuild. */
function options(p: TimeSeriesChartProps, width: number, latest: () => TimeSeriesChartProps): uPlot.Options {
  const accent = cssVar("--accent", "#1f5fbf");
  const muted = cssVar("--fg-muted", "#5b6470");
  const grid = cssVar("--border", "#d6dbe1");
  const font = `11px ${cssVar("--font-sans", "sans-serif")}`;
  const axis: uPlot.Axis = { stroke: muted, font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  return {
    width,
    height: p.height ?? 180,
    // Times in UTC, as everywhere in the console.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    scales: {
      x: {
        time: true,
        range: (_u, min, max) => latest().xRange ?? [min, max],
      },
      y: { range: (_u, _min, max) => [0, max && max > 0 ? max * 1.15 : 1] },
    },
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false } },
    series: [
      {
        label: "UTC",
        value: (_u, v) => (v === null ? "—" : formatUtc(v * 1000)),
      },
      {
        label: p.label,
        stroke: accent,
        width: 1.5,
        fill: withAlpha(accent, p.style === "bars" ? "99" : "26"),
        spanGaps: false,
        value: (_u, v) => (v === null || v === undefined ? "—" : p.format(v)),
        ...(p.style === "bars" && uPlot.paths.bars
          ? { paths: uPlot.paths.bars({ size: [0.7, 24] }), points: { show: false } }
          : {}),
      },
    ],
    axes: [
      {
        ...axis,
        values: (u, splits) => {
          const span = (u.scales.x.max ?? 0) - (u.scales.x.min ?? 0);
          return splits.map((v) => formatAxisTime(v, span));
        },
      },
      { ...axis, size: 56, values: (_u, splits) => splits.map((v) => p.format(v)) },
    ],
  };
}

export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const wrap = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const build = () => {
      plot.current?.destroy();
      const p = latest.current;
      plot.current = new uPlot(
        options(p, Math.max(200, el.clientWidth), () => latest.current),
        [p.xs, p.ys],
        el,
      );
    };
    build();
    const resize = new ResizeObserver(() => {
      const w = Math.max(200, el.clientWidth);
      if (plot.current && plot.current.width !== w)
        plot.current.setSize({ width: w, height: latest.current.height ?? 180 });
    });
    resize.observe(el);
    const theme = new MutationObserver(build);
    theme.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    const scheme = window.matchMedia("(prefers-color-scheme: dark)");
    scheme.addEventListener("change", build);
    return () => {
      resize.disconnect();
      theme.disconnect();
      scheme.removeEventListener("change", build);
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData([props.xs, props.ys]);
  }, [props.xs, props.ys]);

  const points = props.ys.filter((v) => v !== null).length;
  const span = props.xRange ? props.xRange[1] - props.xRange[0] : undefined;
  return (
    <figure className="chart" data-testid={props.testId} data-points={points} data-span-seconds={span}>
      <figcaption className="chart-caption">
        <span className="strong">{props.label}</span> <span className="hint">{props.summary}</span>
      </figcaption>
      {/* The canvas is drawn on mount; the fixed height keeps the page from shifting meanwhile. */}
      <div
        ref={wrap}
        className="chart-canvas"
        role="img"
        aria-label={`${props.label}: ${props.summary}`}
        style={{ minHeight: (props.height ?? 180) + 30 }}
      />
    </figure>
  );
}
