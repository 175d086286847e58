//! Message text as HTML: CommonMark (with tables and strikethrough) by
//! pulldown-cmark, safe whatever the text holds.
//!
//! - Raw HTML in a message (a block or inline) is shown as text, never as
//!   HTML: its events become text events, which the HTML writer escapes.
//! - A link is kept only for `http:`, `https:` and `mailto:` addresses,
//!   opened in a new tab with `rel="noopener noreferrer"`; any other
//!   (`javascript:`, `data:`, relative ones) shows its text alone.
//! - An image is never loaded (the page's policy would refuse it anyway):
//!   it shows as its alt text and address.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// `text` rendered as HTML (escaped by construction, see the module).
pub fn to_html(text: &str) -> String {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    let mut links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(text, opts).flat_map(|e| -> Vec<Event<'_>> {
        match e {
            Event::Html(h) | Event::InlineHtml(h) => vec![Event::Text(h)],
            Event::Start(Tag::Link { dest_url, .. }) => {
                let ok = allowed(&dest_url);
                links.push(ok);
                if ok {
                    vec![Event::InlineHtml(CowStr::from(format!(
                        "<a href=\"{}\" rel=\"noopener noreferrer\" target=\"_blank\">",
                        attr(&dest_url)
                    )))]
                } else {
                    vec![]
                }
            }
            Event::End(TagEnd::Link) => {
                if links.pop().unwrap_or(false) {
                    vec![Event::InlineHtml("</a>".into())]
                } else {
                    vec![]
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                vec![Event::Text(CowStr::from(format!("[image {}: ", dest_url)))]
            }
            Event::End(TagEnd::Image) => vec![Event::Text("]".into())],
            other => vec![other],
        }
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// Whether a link to `url` may be followed.
pub fn allowed(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// `s` escaped for an HTML attribute in double quotes.
pub fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_shown_as_text() {
        assert_eq!(
            to_html("hi <script>alert(1)</script> <img src=x onerror=alert(1)>"),
            "<p>hi &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;</p>\n"
        );
        assert_eq!(
            to_html("<div onclick=\"x()\">\nblock\n</div>"),
            "&lt;div onclick=\"x()\"&gt;\nblock\n&lt;/div&gt;"
        );
    }

    #[test]
    fn only_web_and_mail_links_are_links() {
        assert_eq!(
            to_html("[a](https://e.x/?a=1&b=\"2\") [b](javascript:alert(1)) [c](mailto:u@e.x) <javascript:x>"),
            "<p><a href=\"https://e.x/?a=1&amp;b=&quot;2&quot;\" rel=\"noopener noreferrer\" target=\"_blank\">a</a> b <a href=\"mailto:u@e.x\" rel=\"noopener noreferrer\" target=\"_blank\">c</a> javascript:x</p>\n"
        );
        assert_eq!(
            to_html("![x](https://e.x/p.png)"),
            "<p>[image https://e.x/p.png: x]</p>\n"
        );
    }

    #[test]
    fn markdown_is_rendered() {
        assert_eq!(
            to_html("# T\n\n`a<b>` **b**\n\n```\nx < y\n```"),
            "<h1>T</h1>\n<p><code>a&lt;b&gt;</code> <strong>b</strong></p>\n<pre><code>x &lt; y\n</code></pre>\n"
        );
    }
}
