//! The SVG chart of a benchmark: time per run against block size, one series per strategy
//! (or mode) and thread count, as the seed articles' figures, but showing the noise too.
//!
//! - Every run is a point; a vertical bar spans each configuration's fastest to slowest run;
//!   a line joins the medians. Tools with no block size (`tr`, `dd`, `cp`) sit in a strip of
//!   their own right of the plot, with their median as a dashed line across it.
//! - Each series has its own (colour, marker) pair: 7 colours of the Okabe-Ito palette
//!   (safe for the common colour-vision deficiencies; its yellow left out, unreadable on
//!   white) times 6 marker shapes. When they suffice, the colour says the strategy (or
//!   mode) and the marker the thread count, with other tools in black: "all orange points
//!   are `pool`, squares are 2 threads". Otherwise series `i` takes colour `i % 7` and shape
//!   `i % 6`; as 7 and 6 are coprime, the first 42 series all differ, and series 42 to 83
//!   repeat them with hollow markers.
//! - The block-size axis is logarithmic (base 2: block sizes are powers of two). The time
//!   axis is logarithmic when the slowest run is 10 or more times the fastest (decades,
//!   with 2 and 5 between them where they fit), otherwise linear from zero in 1-2-5 steps.
//!   Its unit (µs, ms or s) follows the magnitudes.
//! - The legend sits right of the plot, never over it; the chart grows taller to hold it.
//!
//! The SVG is self-contained (no scripts, fonts or links) and every text from outside (the
//! title, series names, the machine) is escaped. Points carry `class="run"`,
//! `data-series`, `data-marker` and a `<title>` tooltip, so tests and readers can find them.

use super::{summarize, Run, Summary};

/// The plot's left edge (room for the time labels and title).
const LEFT: f64 = 86.0;
/// The main plot's width.
const PLOT_W: f64 = 640.0;
/// Above the plot: title and subtitle.
const TOP: f64 = 72.0;
/// The plot's height (the chart may grow taller for the legend, not the plot).
const PLOT_H: f64 = 420.0;
/// Below the plot: tick labels, axis title, caption.
const BOTTOM: f64 = 84.0;
/// One legend entry's height.
const LEGEND_ROW: f64 = 20.0;

/// Okabe & Ito's colour-blind-safe palette without its yellow.
const COLOURS: [&str; 7] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
];

/// Marker shapes, in the order series take them.
const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Cross,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Circle => "circle",
            Shape::Square => "square",
            Shape::TriangleUp => "triangle-up",
            Shape::Diamond => "diamond",
            Shape::TriangleDown => "triangle-down",
            Shape::Cross => "cross",
        }
    }
}

/// How series `i` is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Style {
    colour: &'static str,
    shape: Shape,
    hollow: bool,
}

/// The look of series `i` when colour and shape cannot each carry a meaning.
fn style(i: usize) -> Style {
    Style {
        colour: COLOURS[i % COLOURS.len()],
        shape: SHAPES[i % SHAPES.len()],
        hollow: (i / (COLOURS.len() * SHAPES.len())) % 2 == 1,
    }
}

/// The look of every series: colour by strategy and shape by thread count (other tools
/// black, one shape each) when the palette and shapes hold them, else [`style`] by index.
fn styles(series: &[Series]) -> Vec<Style> {
    let mut bases: Vec<&str> = Vec::new();
    let mut threads: Vec<usize> = Vec::new();
    let mut peers = 0;
    for s in series {
        if s.peer {
            peers += 1;
        } else {
            if !bases.contains(&s.base.as_str()) {
                bases.push(&s.base);
            }
            if !threads.contains(&s.threads) {
                threads.push(s.threads);
            }
        }
    }
    threads.sort_unstable();
    let colours_for_bases = if peers > 0 {
        COLOURS.len() - 1
    } else {
        COLOURS.len()
    };
    if bases.len() > colours_for_bases || threads.len() > SHAPES.len() || peers > SHAPES.len() {
        return (0..series.len()).map(style).collect();
    }
    let mut peer = 0;
    series
        .iter()
        .map(|s| {
            if s.peer {
                peer += 1;
                Style {
                    colour: COLOURS[COLOURS.len() - 1],
                    shape: SHAPES[peer - 1],
                    hollow: false,
                }
            } else {
                let b = bases.iter().position(|&b| b == s.base).unwrap_or(0);
                let t = threads.iter().position(|&t| t == s.threads).unwrap_or(0);
                Style {
                    colour: COLOURS[b],
                    shape: SHAPES[t],
                    hollow: false,
                }
            }
        })
        .collect()
}

/// Escapes text for SVG (XML 1.0) content and attribute values. Characters XML cannot hold
/// at all (most C0 controls, U+FFFE, U+FFFF) become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// One marker's SVG element at (x, y), with the attributes `attrs` added and, when given,
/// a `<title>` tooltip inside.
fn marker(st: Style, x: f64, y: f64, attrs: &str, tip: Option<&str>) -> String {
    let r = 3.6;
    let (element, geometry) = match st.shape {
        Shape::Circle => ("circle", format!("cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\"")),
        Shape::Square => {
            let h = r * 0.9;
            (
                "rect",
                format!(
                    "x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"",
                    x - h,
                    y - h,
                    2.0 * h,
                    2.0 * h
                ),
            )
        }
        Shape::TriangleUp | Shape::TriangleDown => {
            let s = if st.shape == Shape::TriangleUp {
                1.0
            } else {
                -1.0
            };
            let pts = [
                (0.0, -s * r * 1.2),
                (r * 1.1, s * r * 0.8),
                (-r * 1.1, s * r * 0.8),
            ];
            ("path", outline(x, y, &pts))
        }
        Shape::Diamond => {
            let pts = [(0.0, -r * 1.3), (r, 0.0), (0.0, r * 1.3), (-r, 0.0)];
            ("path", outline(x, y, &pts))
        }
        Shape::Cross => {
            // An X drawn as one filled outline, so it has a fill like the other shapes.
            let (a, b) = (r * 1.1, r * 0.35);
            let pts = [
                (-a, -a + b),
                (-a + b, -a),
                (0.0, -b),
                (a - b, -a),
                (a, -a + b),
                (b, 0.0),
                (a, a - b),
                (a - b, a),
                (0.0, b),
                (-a + b, a),
                (-a, a - b),
                (-b, 0.0),
            ];
            ("path", outline(x, y, &pts))
        }
    };
    let fill = if st.hollow { "white" } else { st.colour };
    let head = format!(
        "<{element} {geometry} fill=\"{fill}\" fill-opacity=\"0.75\" stroke=\"{}\" stroke-width=\"1\" data-marker=\"{}\" data-colour=\"{}\"{attrs}",
        st.colour,
        st.shape.name(),
        st.colour
    );
    match tip {
        Some(t) => format!("{head}><title>{}</title></{element}>", escape(t)),
        None => format!("{head}/>"),
    }
}

/// The `d` attribute of a closed outline through `pts`, relative to (x, y).
fn outline(x: f64, y: f64, pts: &[(f64, f64)]) -> String {
    let d: Vec<String> = pts
        .iter()
        .map(|(dx, dy)| format!("{:.1},{:.1}", x + dx, y + dy))
        .collect();
    format!("d=\"M{}Z\"", d.join("L"))
}

/// A series as drawn: its configurations by block size, each with its runs.
struct Series {
    name: String,
    /// The strategy or mode (the name without its thread count).
    base: String,
    /// Threads (the same for every configuration of a series).
    threads: usize,
    /// A tool with no block size (drawn in the strip).
    peer: bool,
    /// (summary, the runs' seconds in run order), sorted by block size.
    configs: Vec<(Summary, Vec<(usize, f64)>)>,
}

fn series_name(s: &str, threads: usize) -> String {
    if threads > 1 {
        format!("{s} x{threads}")
    } else {
        s.to_string()
    }
}

fn group(runs: &[Run]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for s in summarize(runs) {
        let name = series_name(&s.series, s.threads);
        let own: Vec<(usize, f64)> = runs
            .iter()
            .filter(|r| {
                r.series == s.series && r.block_size == s.block_size && r.threads == s.threads
            })
            .map(|r| (r.run, r.seconds))
            .collect();
        let peer = s.block_size == 0;
        match out.iter_mut().find(|x| x.name == name) {
            Some(x) => {
                x.peer &= peer;
                x.configs.push((s, own));
            }
            None => out.push(Series {
                name,
                base: s.series.clone(),
                threads: s.threads,
                peer,
                configs: vec![(s, own)],
            }),
        }
    }
    for s in &mut out {
        s.configs.sort_by_key(|(c, _)| c.block_size);
    }
    // Drawn series first, peers last, each in first-seen order.
    out.sort_by_key(|s| s.peer);
    out
}

/// The time axis: unit, scale and ticks.
struct TimeAxis {
    unit: &'static str,
    /// Seconds to the unit.
    factor: f64,
    log: bool,
    /// The axis range, in the unit.
    lo: f64,
    hi: f64,
    /// Labelled ticks, in the unit.
    ticks: Vec<f64>,
    /// Unlabelled grid lines (log axes: the 2..9 multiples of each decade).
    minor: Vec<f64>,
}

/// The smallest of 1, 2, 5 x 10^k that is >= x (x > 0).
fn nice_up(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// The largest of 1, 2, 5 x 10^k that is <= x (x > 0).
fn nice_down(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v <= x * (1.0 + 1e-9))
        .unwrap_or(p)
}

/// Label of a tick value, with no more decimals than its 1-2-5 step needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{v:.decimals$}")
}

impl TimeAxis {
    fn new(seconds: &[f64]) -> TimeAxis {
        let finite: Vec<f64> = seconds
            .iter()
            .copied()
            .filter(|s| s.is_finite() && *s > 0.0)
            .collect();
        let lo_s = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let hi_s = finite.iter().copied().fold(0.0, f64::max);
        let (lo_s, hi_s) = if finite.is_empty() {
            (1e-3, 1e-3)
        } else {
            (lo_s, hi_s)
        };
        let (unit, factor) = if hi_s < 1e-3 {
            ("µs", 1e6)
        } else if lo_s >= 1.0 {
            ("s", 1.0)
        } else {
            ("ms", 1e3)
        };
        let (lo, hi) = (lo_s * factor, hi_s * factor);
        if hi / lo >= 10.0 {
            Self::logarithmic(unit, factor, lo, hi)
        } else {
            let step = nice_up(hi / 5.0);
            let n = (hi / step - 1e-9).ceil().max(1.0) as usize;
            TimeAxis {
                unit,
                factor,
                log: false,
                lo: 0.0,
                hi: step * n as f64,
                ticks: (0..=n).map(|i| step * i as f64).collect(),
                minor: Vec::new(),
            }
        }
    }

    fn logarithmic(unit: &'static str, factor: f64, lo: f64, hi: f64) -> TimeAxis {
        let (mut lo, mut hi) = (nice_down(lo), nice_up(hi));
        let decades = hi.log10() - lo.log10();
        let decade_px = PLOT_H / decades;
        // The 2 and 5 ticks fit when the tightest gap (1 to 2 or 5 to 10: 0.30 decade)
        // holds a label with room to spare (up to about 6 decades on this plot).
        let with_2_5 = decade_px * 2f64.log10() >= 20.0;
        if !with_2_5 {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf((hi.log10() - 1e-9).ceil());
        }
        let decades = (hi.log10() - lo.log10()).round().max(1.0);
        // Every `every`-th decade when even decades are too close for their labels.
        let every = (16.0 / (PLOT_H / decades)).ceil().max(1.0) as i32;
        let (k0, k1) = (
            lo.log10().floor() as i32 - 1,
            (hi.log10()).ceil() as i32 + 1,
        );
        let inside = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
        let (mut ticks, mut minor) = (Vec::new(), Vec::new());
        for k in k0..=k1 {
            let p = 10f64.powi(k);
            for m in 1..10 {
                let v = p * m as f64;
                if !inside(v) {
                    continue;
                }
                let labelled = if m == 1 {
                    k.rem_euclid(every) == 0
                } else {
                    with_2_5 && (m == 2 || m == 5)
                };
                if labelled {
                    ticks.push(v);
                } else if decade_px >= 40.0 {
                    minor.push(v);
                }
            }
        }
        TimeAxis {
            unit,
            factor,
            log: true,
            lo,
            hi,
            ticks,
            minor,
        }
    }

    /// The y pixel of `seconds`.
    fn y(&self, seconds: f64) -> f64 {
        let v = seconds * self.factor;
        let f = if self.log {
            let v = v.max(self.lo);
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        TOP + PLOT_H - f.clamp(0.0, 1.0) * PLOT_H
    }

    fn label(&self, v: f64) -> String {
        if self.log {
            tick_label(v, 10f64.powf(v.log10().floor()))
        } else {
            let step = self.ticks.get(1).copied().unwrap_or(1.0);
            tick_label(v, step)
        }
    }
}

/// A block size for a tick label: 512 B, 4 KiB, 1 MiB.
fn bytes_label(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Renders the chart of `runs`; `subtitle` (the machine) is printed under the title.
pub fn chart(title: &str, subtitle: &str, runs: &[Run]) -> String {
    let series = group(runs);
    let drawn = series.iter().filter(|s| !s.peer).count();
    let peers = series.len() - drawn;
    let seconds: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
    let axis = TimeAxis::new(&seconds);
    let looks = styles(&series);

    // The block-size axis: log2, half an octave of margin each side.
    let sizes: Vec<u64> = runs
        .iter()
        .map(|r| r.block_size)
        .filter(|&b| b > 0)
        .collect();
    let l0 = (sizes.iter().copied().min().unwrap_or(1) as f64).log2();
    let l1 = (sizes.iter().copied().max().unwrap_or(1) as f64).log2();
    let (l0, l1) = if l1 - l0 < 1.0 {
        (l0 - 1.0, l1 + 1.0)
    } else {
        (l0 - 0.5, l1 + 0.5)
    };
    let x_of = |b: u64| LEFT + ((b as f64).log2() - l0) / (l1 - l0) * PLOT_W;
    // Series at one block size stand side by side (dodged) so that their bars do not
    // overlap, within 0.6 octave (and 60 % of the narrowest gap between block sizes) so
    // that they stay nearest their own block size.
    let mut distinct = sizes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let gap = distinct
        .windows(2)
        .map(|w| x_of(w[1]) - x_of(w[0]))
        .fold(PLOT_W / 2.0, f64::min);
    let octave_px = PLOT_W / (l1 - l0);
    let dodge = if drawn > 1 {
        ((gap * 0.6).min(octave_px * 0.6) / drawn as f64).min(9.0)
    } else {
        0.0
    };
    let offset = |i: usize| (i as f64 - (drawn as f64 - 1.0) / 2.0) * dodge;

    let strip_w = if peers > 0 {
        30.0 + 24.0 * peers as f64
    } else {
        0.0
    };
    let strip_x = LEFT + PLOT_W + 16.0;
    let legend_x = LEFT + PLOT_W + if peers > 0 { 16.0 + strip_w } else { 0.0 } + 28.0;
    let longest = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let width = legend_x + 44.0 + 7.2 * longest as f64 + 16.0;
    let legend_h = LEGEND_ROW * series.len() as f64;
    let height = (TOP + PLOT_H + BOTTOM).max(TOP + legend_h + 20.0);
    let (plot_bottom, plot_right) = (TOP + PLOT_H, LEFT + PLOT_W);

    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"26\" font-size=\"16\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{LEFT}\" y=\"46\" font-size=\"11\" fill=\"#444\">{}</text>\n",
        escape(title),
        escape(subtitle)
    );

    // Grid and time ticks.
    svg.push_str("<g class=\"y-axis\">\n");
    for &v in &axis.minor {
        let y = axis.y(v / axis.factor);
        svg.push_str(&format!(
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{plot_right}\" y2=\"{y:.1}\" stroke=\"#f0f0f0\"/>\n"
        ));
    }
    for &v in &axis.ticks {
        let y = axis.y(v / axis.factor);
        svg.push_str(&format!(
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{plot_right}\" y2=\"{y:.1}\" stroke=\"#d8d8d8\"/>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            LEFT - 6.0,
            y + 4.0,
            escape(&axis.label(v))
        ));
    }
    svg.push_str("</g>\n");
    // Block-size ticks: powers of two, every `step` octaves so that labels do not collide.
    let step = (58.0 / octave_px).ceil().max(1.0) as i64;
    svg.push_str("<g class=\"x-axis\">\n");
    for k in (l0.ceil() as i64)..=(l1.floor() as i64) {
        if !(0..63).contains(&k) || k % step != 0 {
            continue;
        }
        let b = 1u64 << k;
        let x = x_of(b);
        svg.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{plot_bottom}\" stroke=\"#eeeeee\"/>\
             <line x1=\"{x:.1}\" y1=\"{plot_bottom}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            plot_bottom + 5.0,
            plot_bottom + 19.0,
            bytes_label(b)
        ));
    }
    svg.push_str("</g>\n");
    // Frame and axis titles.
    svg.push_str(&format!(
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" fill=\"none\" stroke=\"black\"/>\n\
         <text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">block size (bytes, log scale)</text>\n\
         <text class=\"axis-title\" x=\"20\" y=\"{:.1}\" transform=\"rotate(-90 20 {:.1})\" text-anchor=\"middle\">time per run ({}{})</text>\n\
         <text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"11\" fill=\"#444\">Each point is one run; bars span the fastest to the slowest run; lines join the medians.</text>\n",
        LEFT + PLOT_W / 2.0,
        plot_bottom + 42.0,
        TOP + PLOT_H / 2.0,
        TOP + PLOT_H / 2.0,
        axis.unit,
        if axis.log { ", log scale" } else { "" },
        plot_bottom + 68.0,
    ));
    if peers > 0 {
        svg.push_str(&format!(
            "<rect x=\"{strip_x:.1}\" y=\"{TOP}\" width=\"{strip_w:.1}\" height=\"{PLOT_H}\" fill=\"none\" stroke=\"black\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">other</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">tools</text>\n",
            strip_x + strip_w / 2.0,
            plot_bottom + 19.0,
            strip_x + strip_w / 2.0,
            plot_bottom + 33.0,
        ));
    }

    // The data: bars, median lines, then points on top.
    // Other tools' median lines differ in dash too, as they may share a colour.
    const DASHES: [&str; 3] = ["6 4", "2 3", "10 3 2 3"];
    let mut peer_slot = 0usize;
    for (i, s) in series.iter().enumerate() {
        let st = looks[i];
        let name = escape(&s.name);
        svg.push_str(&format!(
            "<g class=\"series\" data-series=\"{i}\" data-name=\"{name}\">\n"
        ));
        let dash = DASHES[peer_slot % DASHES.len()];
        let xs: Vec<f64> = if s.peer {
            let x = strip_x + 15.0 + 12.0 + 24.0 * peer_slot as f64;
            peer_slot += 1;
            vec![x; s.configs.len()]
        } else {
            s.configs
                .iter()
                .map(|(c, _)| x_of(c.block_size.max(1)) + offset(i))
                .collect()
        };
        if s.peer {
            let y = axis.y(s.configs[0].0.median);
            svg.push_str(&format!(
                "<line class=\"median\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"{dash}\"/>\n",
                xs[0],
                st.colour
            ));
        } else if s.configs.len() > 1 {
            let pts: Vec<String> = s
                .configs
                .iter()
                .zip(&xs)
                .map(|((c, _), x)| format!("{x:.1},{:.1}", axis.y(c.median)))
                .collect();
            svg.push_str(&format!(
                "<polyline class=\"median\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
                st.colour,
                pts.join(" ")
            ));
        }
        for ((c, own), &x) in s.configs.iter().zip(&xs) {
            let (y0, y1) = (axis.y(c.min), axis.y(c.max));
            svg.push_str(&format!(
                "<path class=\"spread\" d=\"M{x:.1},{y0:.1}V{y1:.1}M{:.1},{y0:.1}H{:.1}M{:.1},{y1:.1}H{:.1}\" stroke=\"{}\" stroke-width=\"1.2\"/>\n",
                x - 3.0,
                x + 3.0,
                x - 3.0,
                x + 3.0,
                st.colour
            ));
            for &(run, secs) in own {
                let where_ = if c.block_size > 0 {
                    format!(", block {}", bytes_label(c.block_size))
                } else {
                    String::new()
                };
                let tip = format!(
                    "{}{where_}, run {}: {} {}",
                    s.name,
                    run + 1,
                    fmt_value(secs * axis.factor),
                    axis.unit
                );
                svg.push_str(&marker(
                    st,
                    x,
                    axis.y(secs),
                    &format!(" class=\"run\" data-series=\"{i}\""),
                    Some(&tip),
                ));
                svg.push('\n');
            }
        }
        // Legend entry.
        let ly = TOP + 10.0 + LEGEND_ROW * i as f64;
        let dash = if s.peer {
            format!(" stroke-dasharray=\"{dash}\"")
        } else {
            String::new()
        };
        svg.push_str(&format!(
            "<g class=\"legend-entry\"><line x1=\"{legend_x:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{}\" stroke-width=\"1.5\"{dash}/>",
            legend_x + 30.0,
            st.colour
        ));
        svg.push_str(&marker(st, legend_x + 15.0, ly, "", None));
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\">{name}</text></g>\n</g>\n",
            legend_x + 38.0,
            ly + 4.0
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

/// A measured value with three significant digits at least.
fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_up_to_84_has_its_own_look() {
        let looks: Vec<Style> = (0..84).map(style).collect();
        for (i, a) in looks.iter().enumerate() {
            for b in &looks[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // Neighbours differ in both colour and shape.
        for w in looks.windows(2) {
            assert_ne!(w[0].colour, w[1].colour);
            assert_ne!(w[0].shape, w[1].shape);
        }
    }

    #[test]
    fn nice_numbers_are_1_2_5_steps() {
        assert_eq!(nice_up(0.7), 1.0);
        assert_eq!(nice_up(1.0), 1.0);
        assert_eq!(nice_up(1.2), 2.0);
        assert_eq!(nice_up(3.0), 5.0);
        assert_eq!(nice_up(870.0), 1000.0);
        assert_eq!(nice_down(870.0), 500.0);
        assert_eq!(nice_down(0.03), 0.02);
        assert_eq!(nice_down(1.0), 1.0);
    }

    #[test]
    fn linear_axis_for_a_narrow_range_has_round_ticks_from_zero() {
        // The axis: a maximum of 4348 ms gave ticks at 870, 1739, 2609.
        let axis = TimeAxis::new(&[1.0, 4.348]);
        assert!(!axis.log);
        assert_eq!(axis.unit, "s");
        assert_eq!(axis.ticks, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let axis = TimeAxis::new(&[0.5, 0.87]);
        assert_eq!(axis.unit, "ms");
        assert_eq!(axis.ticks, vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
        assert_eq!(axis.label(200.0), "200");
    }

    #[test]
    fn wide_range_gets_a_log_axis_with_decades_and_2_5() {
        let axis = TimeAxis::new(&[0.003, 0.9]);
        assert!(axis.log);
        assert_eq!(axis.unit, "ms");
        assert_eq!(
            axis.ticks,
            vec![2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        // Eight decades: decades only.
        let axis = TimeAxis::new(&[1e-6 * 1.5, 50.0]);
        assert!(axis.log);
        assert!(axis
            .ticks
            .iter()
            .all(|v| (v.log10() - v.log10().round()).abs() < 1e-9));
        assert!(axis.ticks.len() >= 4);
    }

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(
            escape("a<b>&\"c'\u{1}\n"),
            "a&lt;b&gt;&amp;&quot;c&#39;\u{FFFD} "
        );
    }

    fn run(series: &str, block_size: u64, threads: usize, run: usize, seconds: f64) -> Run {
        Run {
            series: series.into(),
            block_size,
            threads,
            run,
            seconds,
        }
    }

    #[test]
    fn three_decades_chart_has_log_ticks_every_point_and_escaped_names() {
        let hostile = "a<b>&\"c</text><script>x</script>";
        let mut runs = Vec::new();
        for (i, b) in [512u64, 4096, 65536].into_iter().enumerate() {
            for r in 0..3 {
                runs.push(run(
                    "slow",
                    b,
                    1,
                    r,
                    2.0 / 10f64.powi(i as i32) + r as f64 * 1e-4,
                ));
                runs.push(run(hostile, b, 2, r, 0.003 + r as f64 * 1e-4));
            }
        }
        runs.push(run("tr", 0, 1, 0, 0.5));
        let svg = chart("title & <more>", "machine", &runs);
        assert_eq!(svg.matches("class=\"run\"").count(), runs.len());
        assert!(!svg.contains("<script") && !svg.contains("<b>"));
        assert!(svg.contains("a&lt;b&gt;&amp;&quot;c&lt;/text&gt;"));
        assert!(svg.contains(">title &amp; &lt;more&gt;</text>"));
        assert!(svg.contains("time per run (ms, log scale)"));
        // 3 ms to 2 s: ticks 2, 5, 10, 20, ... 1000, 2000 ms.
        for t in [
            "2", "5", "10", "20", "50", "100", "200", "500", "1000", "2000",
        ] {
            assert!(svg.contains(&format!(">{t}</text>")), "no tick {t}");
        }
        assert!(!svg.contains(">3</text>"));
        // Three series and the other tool: the strategy's colour, the threads' marker.
        let looks = styles(&group(&runs));
        assert_eq!(looks.len(), 3);
        assert_ne!(looks[0].colour, looks[1].colour);
        assert_ne!(looks[0].shape, looks[1].shape);
        assert_eq!(looks[2].colour, "#000000");
    }

    #[test]
    fn too_many_strategies_fall_back_to_distinct_looks_by_index() {
        let runs: Vec<Run> = (0..20)
            .map(|i| run(&format!("s{i}"), 4096, 1 + i % 3, 0, 0.01))
            .collect();
        let looks = styles(&group(&runs));
        assert_eq!(looks.len(), 20);
        let set: std::collections::HashSet<_> = looks
            .iter()
            .map(|l| (l.colour, l.shape.name(), l.hollow))
            .collect();
        assert_eq!(set.len(), 20);
    }

    #[test]
    fn block_sizes_read_in_binary_units() {
        assert_eq!(bytes_label(512), "512 B");
        assert_eq!(bytes_label(4096), "4 KiB");
        assert_eq!(bytes_label(1 << 20), "1 MiB");
        assert_eq!(bytes_label(1536), "1.5 KiB");
    }
}
