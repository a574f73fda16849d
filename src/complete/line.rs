//! Splitting the line bash hands over (up to the cursor) into words, as the shell would: quotes
//! and backslashes removed, an unterminated quote being the word under the cursor. bash's own
//! `COMP_WORDS` are no use here: they break `--opt=value` at the `=`.

/// The words of the last command on the line, its name first; the last word is the one being
/// completed (empty after a space).
pub(crate) fn words(line: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => word.get_or_insert_default().push(c),
            (Some(_), '\\') => match chars.peek() {
                Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                    word.get_or_insert_default().push(n);
                    chars.next();
                }
                _ => word.get_or_insert_default().push(c),
            },
            (Some(_), _) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    word.get_or_insert_default().push(n);
                }
            }
            (None, ' ' | '\t' | '\n') => words.extend(word.take()),
            // A new command starts: only its words matter.
            (None, '|' | ';' | '&' | '(') => {
                word = None;
                words.clear();
            }
            (None, _) => word.get_or_insert_default().push(c),
        }
    }
    words.push(word.unwrap_or_default());
    // `VAR=value sglang-launch …`: the assignments are not the command's words.
    let assignments = words
        .iter()
        .take(words.len() - 1)
        .take_while(|w| is_assignment(w))
        .count();
    words.drain(..assignments);
    words
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn splits_like_the_shell() {
        assert_eq!(words("sl run --topology="), ["sl", "run", "--topology="]);
        assert_eq!(words("sl run "), ["sl", "run", ""]);
        assert_eq!(words("sl 'a b' \"c\\\"d"), ["sl", "a b", "c\"d"]);
        assert_eq!(words("sl a\\ b"), ["sl", "a b"]);
        assert_eq!(words("X=1 Y=2 sl --mo"), ["sl", "--mo"]);
        assert_eq!(words("cat x | sl ex"), ["sl", "ex"]);
        assert_eq!(words("sl ''"), ["sl", ""]);
        assert_eq!(words(""), [""]);
    }
}
