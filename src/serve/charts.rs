//! Bar charts drawn by the server as SVG: readable without JavaScript,
//! coloured by the stylesheet (so dark mode follows the system), each bar
//! carrying its label and value (`<title>`, and `data-` attributes for
//! scripts and tests). Labels are escaped like every other text.

use maud::{html, Markup};

/// Vertical bars, one per value, left to right (messages per day): the
/// first and last labels under the axis, the largest value beside it.
pub fn columns(title: &str, bars: &[(String, u64)]) -> Markup {
    let bars: Vec<(String, f64)> = bars.iter().map(|(l, n)| (l.clone(), *n as f64)).collect();
    columns_of(title, &bars, &|n| format!("{n}"))
}

/// [`columns`] of any amounts, each written by `show` (dollars, say).
pub fn columns_of(title: &str, bars: &[(String, f64)], show: &dyn Fn(f64) -> String) -> Markup {
    let (w, h, pad) = (720.0_f64, 160.0_f64, 24.0_f64);
    let most = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let max = if most > 0.0 { most } else { 1.0 };
    let step = if bars.is_empty() {
        w
    } else {
        w / bars.len() as f64
    };
    let total: f64 = bars.iter().map(|b| b.1).sum();
    html! {
        figure.chart {
            figcaption { (title) " (" (show(total)) " in all, at most " (show(most)) " a day)" }
            svg.columns xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (w) " " (h + pad)} role="img" aria-label=(title) {
                line.axis x1="0" y1=(h) x2=(w) y2=(h) {}
                @for (i, (label, n)) in bars.iter().enumerate() {
                    @let bh = (*n / max) * (h - 4.0);
                    rect.bar x=(format!("{:.2}", i as f64 * step + 0.5)) y=(format!("{:.2}", h - bh))
                        width=(format!("{:.2}", (step - 1.0).max(0.5))) height=(format!("{:.2}", bh))
                        data-label=(label) data-value=(n) {
                        title { (label) ": " (show(*n)) }
                    }
                }
                @if let (Some(first), Some(last)) = (bars.first(), bars.last()) {
                    text.tick x="0" y=(h + pad - 6.0) { (first.0) }
                    text.tick x=(w) y=(h + pad - 6.0) text-anchor="end" { (last.0) }
                }
            }
        }
    }
}

/// Horizontal bars with their labels (sessions per directory, messages
/// per model), largest first as given.
pub fn rows(title: &str, bars: &[(String, u64)]) -> Markup {
    let bars: Vec<(String, f64)> = bars.iter().map(|(l, n)| (l.clone(), *n as f64)).collect();
    rows_of(title, &bars, &|n| format!("{n}"))
}

/// [`rows`] of any amounts, each written by `show`.
pub fn rows_of(title: &str, bars: &[(String, f64)], show: &dyn Fn(f64) -> String) -> Markup {
    let row = 22.0_f64;
    let (w, label_w) = (720.0_f64, 300.0_f64);
    let most = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let max = if most > 0.0 { most } else { 1.0 };
    let h = row * bars.len().max(1) as f64;
    html! {
        figure.chart {
            figcaption { (title) }
            svg.rows xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (w) " " (h)} role="img" aria-label=(title) {
                @if bars.is_empty() {
                    text.tick x="0" y="15" { "nothing yet" }
                }
                @for (i, (label, n)) in bars.iter().enumerate() {
                    @let y = i as f64 * row;
                    @let bw = (*n / max) * (w - label_w - 60.0);
                    text.label x=(label_w - 8.0) y=(y + 15.0) text-anchor="end" { (cut(label, 42)) }
                    rect.bar x=(label_w) y=(y + 3.0) width=(format!("{:.2}", bw.max(1.0))) height=(row - 6.0)
                        data-label=(label) data-value=(n) {
                        title { (label) ": " (show(*n)) }
                    }
                    text.value x=(format!("{:.2}", label_w + bw.max(1.0) + 6.0)) y=(y + 15.0) { (show(*n)) }
                }
            }
        }
    }
}

/// `s` cut to `n` characters, with an ellipsis at the front (directories
/// differ at their end).
fn cut(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_owned();
    }
    let tail: String = s.chars().skip(count - (n - 1)).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_carry_their_values_and_labels_are_escaped() {
        let svg = rows("t", &[("<b>".into(), 4), ("a".into(), 2)]).into_string();
        assert!(
            svg.contains("data-label=\"&lt;b&gt;\" data-value=\"4\""),
            "{svg}"
        );
        assert!(svg.contains("width=\"360.00\""), "{svg}");
        assert!(svg.contains("width=\"180.00\""), "{svg}");
        assert!(!svg.contains("<b>"));
        let days =
            columns("d", &[("2026-01-01".into(), 0), ("2026-01-02".into(), 3)]).into_string();
        assert!(days.contains("height=\"0.00\""), "{days}");
        assert!(days.contains("height=\"156.00\""), "{days}");
        assert!(days.contains("(3 in all, at most 3 a day)"), "{days}");
    }
}
