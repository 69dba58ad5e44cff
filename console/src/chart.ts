import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.js';

/** One line of a chart: its label, colour and values (one per minute). */
export interface Line {
  label: string;
  color: string;
  values: number[];
}

/** A per-minute chart of the last hour (uPlot: small, canvas, no dependencies). */
export function minuteChart(title: string, minutes: number[], lines: Line[], testid: string): HTMLElement {
  const box = h('div', { class: 'chart', 'data-testid': testid }, h('h3', {}, title));
  const width = 560;
  const plot = new uPlot(
    {
      width,
      height: 180,
      legend: { show: true },
      cursor: { show: true },
      axes: [
        { stroke: '#9aa4b2', grid: { stroke: '#263040' }, ticks: { stroke: '#263040' } },
        { stroke: '#9aa4b2', grid: { stroke: '#263040' }, ticks: { stroke: '#263040' }, size: 60 },
      ],
      scales: { x: { time: true } },
      series: [
        {},
        ...lines.map((l) => ({
          label: l.label,
          stroke: l.color,
          width: 2,
          fill: `${l.color}22`,
          points: { show: false },
        })),
      ],
    },
    [minutes.map((m) => m / 1000), ...lines.map((l) => l.values)],
  );
  box.append(plot.root);
  return box;
}
