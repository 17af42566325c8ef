//! TechEmpower's fortunes test: the stored rows plus one added at request
//! time, sorted by message, rendered as an HTML table with every message
//! escaped.

use crate::db::Fortune;

pub const ADDED_AT_REQUEST_TIME: &str = "Additional fortune added at request time.";

/// The page for `fortunes` (the stored rows), with the added row.
pub fn page(mut fortunes: Vec<Fortune>) -> String {
    fortunes.push(Fortune {
        id: 0,
        message: ADDED_AT_REQUEST_TIME.to_owned(),
    });
    fortunes.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    let mut html = String::with_capacity(1200);
    html.push_str(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body>\
         <table><tr><th>id</th><th>message</th></tr>",
    );
    for fortune in &fortunes {
        html.push_str("<tr><td>");
        html.push_str(&fortune.id.to_string());
        html.push_str("</td><td>");
        escape_into(&mut html, &fortune.message);
        html.push_str("</td></tr>");
    }
    html.push_str("</table></body></html>");
    html
}

/// HTML-escapes `text` (the five characters with a meaning in markup).
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_sorts() {
        let page = page(vec![
            Fortune {
                id: 2,
                message: "b <i>&'\"".into(),
            },
            Fortune {
                id: 1,
                message: "a".into(),
            },
        ]);
        assert!(page.contains(
            "<tr><td>0</td><td>Additional fortune added at request time.</td></tr>\
             <tr><td>1</td><td>a</td></tr>\
             <tr><td>2</td><td>b &lt;i&gt;&amp;&#39;&quot;</td></tr></table>"
        ));
    }
}
