// Where a figure's legends go in the presenter view (restyle.js calls it for every figure it
// styles, and for one out of view: a legend moved as a view shows it).
import { onAPhone } from "./config.js";
import { base, set } from "./figure-base.js";

// In the presenter view a legend of more than one row under a figure wider than tall goes to
// its right, in one column: under it, in the presenter's type, it took most of the figure's
// height (random-features' weights: a plot area of 45 px under two rows of legend). On a phone
// the other way: a legend at a figure's right goes under it, as the figure is as wide as the
// screen and may be as tall as it needs (beside it, in the presenter's type, hybrid's memory
// legend made the figure 9 px wider than the screen at any scale: the fit fell to "too small"),
// in one column.
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const isLegend = (x) => x && x.type === "Legend" && Array.isArray(x.items);
const rows = (l) => (l.orientation === "vertical" && !l.ncols ? l.items.length : Math.ceil(l.items.length / (l.ncols || l.items.length)));
export function legendAside(m, present) {
  const below = base(m, "below"), right = base(m, "right");
  if (!Array.isArray(below) || !Array.isArray(right)) return;
  const phone = present && onAPhone();
  const toRight = present && !phone && base(m, "width") > base(m, "height")
    ? below.filter((x) => isLegend(x) && rows({ orientation: base(x, "orientation"), ncols: base(x, "ncols"), items: x.items }) > 1) : [];
  const toBelow = phone ? right.filter(isLegend) : [];
  const want = { below: [...below.filter((x) => !toRight.includes(x)), ...toBelow], right: [...right.filter((x) => !toBelow.includes(x)), ...toRight] };
  // the side that gains a legend first: BokehJS drops the view of a legend on neither side at
  // once (each change rebuilds the figure's renderer views) and builds it again only later, so
  // the layout at the restyle's end found none ("cannot find a view for Legend": P on a live page)
  const gains = (side) => want[side].some((x) => !m[side].includes(x));
  for (const side of ["below", "right"].sort((a, b) => gains(b) - gains(a))) if (!same(m[side], want[side])) m[side] = want[side];
  // one column: beside a figure, and under one on a phone (in rows, a legend as wide as its
  // entries side by side had made random-features' figure wider than the screen: scale 0.6)
  const column = (l) => toRight.includes(l) || (phone && want.below.includes(l));
  for (const l of [...below, ...right].filter(isLegend)) {
    set(l, "orientation", column(l) ? "vertical" : base(l, "orientation"));
    set(l, "ncols", column(l) ? 1 : base(l, "ncols"));
  }
}
