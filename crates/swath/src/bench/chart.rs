//! A small SVG line chart: time (median, milliseconds) against block size on a log2 axis,
//! one line per series (and thread count), as the seed articles' figures. Self-contained
//! SVG, readable in any browser.

use super::Summary;

const W: f64 = 900.0;
const H: f64 = 520.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 220.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders the chart. Summaries with no block size (peer tools) become horizontal lines.
pub fn line_chart(title: &str, summaries: &[Summary]) -> String {
    let mut lines: Vec<(String, Vec<(u64, f64)>)> = Vec::new();
    for s in summaries {
        let name = if s.threads > 1 {
            format!("{} x{}", s.series, s.threads)
        } else {
            s.series.clone()
        };
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push((s.block_size, s.median * 1e3)),
            None => lines.push((name, vec![(s.block_size, s.median * 1e3)])),
        }
    }
    let sizes: Vec<u64> = summaries
        .iter()
        .map(|s| s.block_size)
        .filter(|&b| b > 0)
        .collect();
    let (xmin, xmax) = (
        sizes.iter().copied().min().unwrap_or(1) as f64,
        sizes.iter().copied().max().unwrap_or(2) as f64,
    );
    let (lx0, lx1) = (xmin.log2(), xmax.log2().max(xmin.log2() + 1.0));
    let ymax = summaries
        .iter()
        .map(|s| s.median * 1e3)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.1;
    let px = |b: f64| LEFT + (b.log2() - lx0) / (lx1 - lx0) * (W - LEFT - RIGHT);
    let py = |ms: f64| H - BOTTOM - ms / ymax * (H - TOP - BOTTOM);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        W / 2.0,
        escape(title)
    );
    // Axes, ticks and labels.
    svg.push_str(&format!(
        "<line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"black\"/>\n",
        H - BOTTOM, W - RIGHT, H - BOTTOM, H - BOTTOM
    ));
    let mut b = xmin;
    while b <= xmax * 1.0001 {
        let x = px(b);
        let label = if b >= 1048576.0 {
            format!("{}M", b / 1048576.0)
        } else if b >= 1024.0 {
            format!("{}K", b / 1024.0)
        } else {
            format!("{b}")
        };
        svg.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"black\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{label}</text>\n",
            H - BOTTOM, H - BOTTOM + 5.0, H - BOTTOM + 20.0
        ));
        b *= 2.0;
    }
    for i in 0..=5 {
        let ms = ymax * i as f64 / 5.0;
        let y = py(ms);
        svg.push_str(&format!(
            "<line x1=\"{}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{ms:.0}</text>\n",
            LEFT, W - RIGHT, LEFT - 6.0, y + 4.0
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">block size (bytes)</text>\n<text x=\"20\" y=\"{}\" transform=\"rotate(-90 20 {})\" text-anchor=\"middle\">median time (ms)</text>\n",
        (LEFT + W - RIGHT) / 2.0, H - 15.0, H / 2.0, H / 2.0
    ));
    for (i, (name, pts)) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = if pts.iter().all(|(b, _)| *b == 0) {
            let y = py(pts[0].1);
            vec![format!("{LEFT},{y:.1}"), format!("{},{y:.1}", W - RIGHT)]
        } else {
            pts.iter()
                .filter(|(b, _)| *b > 0)
                .map(|(b, ms)| format!("{:.1},{:.1}", px(*b as f64), py(*ms)))
                .collect()
        };
        let dash = if pts.iter().all(|(b, _)| *b == 0) {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>\n",
            path.join(" ")
        ));
        let ly = TOP + 18.0 * i as f64;
        svg.push_str(&format!(
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"3\"{dash}/><text x=\"{}\" y=\"{}\">{}</text>\n",
            W - RIGHT + 15.0, W - RIGHT + 40.0, W - RIGHT + 46.0, ly + 4.0, escape(name)
        ));
    }
    svg.push_str("</svg>\n");
    svg
}
