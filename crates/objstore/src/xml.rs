//! The `Code` and `Message` of S3's error body
//! (`<Error><Code>NoSuchKey</Code><Message>...</Message>...</Error>`).
//!
//! Only these two elements are read, as text between their tags: an error body is
//! small and flat, and a store that sends something else (an HTML page from a proxy)
//! still gets its first words quoted instead of a parse error.

/// The error's code and message, each when present.
pub fn code_and_message(body: &str) -> (Option<String>, Option<String>) {
    (element(body, "Code"), element(body, "Message"))
}

/// The text of the first `<name>...</name>`, entities decoded; None when absent or empty.
fn element(body: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = body.find(&open)? + open.len();
    let len = body[start..].find(&close)?;
    let text = unescape(body[start..start + len].trim());
    (!text.is_empty()).then_some(text)
}

/// XML's five predefined entities; anything else is left as it is.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// A body that is not S3's error XML, shortened to quote in a message.
pub fn excerpt(body: &str) -> String {
    let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(200) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::{code_and_message, excerpt};

    #[test]
    fn reads_code_and_message() {
        let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>InvalidAccessKeyId</Code><Message>The key &amp; &lt;id&gt; is unknown.</Message>
<Resource>/kfdo/x</Resource></Error>"#;
        assert_eq!(
            code_and_message(body),
            (
                Some("InvalidAccessKeyId".into()),
                Some("The key & <id> is unknown.".into())
            )
        );
    }

    #[test]
    fn other_bodies_give_nothing_and_a_short_excerpt() {
        assert_eq!(code_and_message("<html>bad gateway</html>"), (None, None));
        assert_eq!(code_and_message("<Code></Code>"), (None, None));
        assert_eq!(code_and_message("<Code>x"), (None, None));
        assert_eq!(excerpt(" a\n  b "), "a b");
        let long = "é".repeat(300);
        assert_eq!(excerpt(&long).chars().count(), 203);
    }
}
