//! String literals written in pieces (issue 18, generator-9
//! `obscured-implicit-concatenation`): Python's and C's adjacent literals
//! and `+` chains are one value, and a secret split over them ("so secret
//! scanners do not trip on it") is whole again only once they are joined.
//!
//! [`view`] gives the text with each run of adjacent pieces joined into one
//! literal, in place: the joined literal starts where the first piece did,
//! and the run's removed quotes and separators follow it as spaces, with
//! every newline kept. The view has the text's length and line count, so a
//! finding in it has the offsets and line of the run's first piece. The
//! scanner judges the view beside the text and keeps what only the view
//! shows.
//!
//! A run is two or more literals of one quote character separated only by
//! `+`, whitespace that holds a newline (a one-line `"a" "b"` is two shell
//! arguments far more often than one value) or a line continuation. Only
//! pieces without whitespace are joined: secrets have none, while split
//! messages do, and joining those would only cost time.

/// Shortest joined value worth a view: below it no detector reports.
const MIN_JOINED: usize = 16;

/// Longest piece followed: a longer literal is no piece of a token.
const MAX_PIECE: usize = 512;

/// A literal at `b[i]` (its opening quote): the index of its closing
/// quote, if it closes on the same line without whitespace inside.
fn piece_end(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() && j <= i + MAX_PIECE {
        match b[j] {
            c if c == q => return Some(j),
            b'\\' if j + 1 < b.len() && !b[j + 1].is_ascii_whitespace() => j += 2,
            c if c.is_ascii_whitespace() => return None,
            _ => j += 1,
        }
    }
    None
}

/// After the closing quote at `b[close]`: the opening quote of the next
/// piece of the same run, if only a run's separator lies between.
fn next_piece(b: &[u8], close: usize) -> Option<usize> {
    let q = b[close];
    let (mut j, mut newline, mut plus) = (close + 1, false, false);
    while j < b.len() {
        match b[j] {
            b'\n' => newline = true,
            b' ' | b'\t' | b'\r' => {}
            b'\\' if b.get(j + 1) == Some(&b'\n') => {
                newline = true;
                j += 1;
            }
            b'+' if !plus => plus = true,
            c if c == q && (newline || plus) => return Some(j),
            _ => return None,
        }
        j += 1;
    }
    None
}

/// The text with every run of adjacent literal pieces joined in place
/// (module doc) and the runs' spans (first opening quote to last closing
/// quote, exclusive), or `None` when it has no run worth joining.
pub(crate) fn view(text: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let b = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut runs = Vec::new();
    // Past the last run or lone piece judged: quotes inside are skipped.
    let mut next_from = 0;
    for i in memchr::memchr2_iter(b'"', b'\'', b) {
        if i < next_from {
            continue;
        }
        let Some(first_end) = piece_end(b, i) else {
            continue;
        };
        // Most literals stand alone: nothing to gather.
        let Some(second) = next_piece(b, first_end) else {
            next_from = first_end + 1;
            continue;
        };
        let mut pieces = vec![(i + 1, first_end)];
        let mut end = first_end;
        let mut next = Some(second);
        while let Some(n) = next {
            let Some(e) = piece_end(b, n) else { break };
            pieces.push((n + 1, e));
            end = e;
            next = next_piece(b, e);
        }
        let joined_len: usize = pieces.iter().map(|&(s, e)| e - s).sum();
        if pieces.len() >= 2 && joined_len >= MIN_JOINED {
            let o = out.get_or_insert_with(|| b.to_vec());
            runs.push((i, end + 1));
            let region = &b[i..=end];
            let mut w = i;
            o[w] = b[i];
            w += 1;
            for &(s, e) in &pieces {
                o[w..w + (e - s)].copy_from_slice(&b[s..e]);
                w += e - s;
            }
            o[w] = b[i];
            w += 1;
            // The rest of the region: its newlines, then spaces.
            let newlines = region.iter().filter(|&&c| c == b'\n').count();
            for _ in 0..newlines {
                o[w] = b'\n';
                w += 1;
            }
            while w <= end {
                o[w] = b' ';
                w += 1;
            }
        }
        next_from = end + 1;
    }
    // Whole pieces and ASCII separators: still UTF-8.
    let joined = String::from_utf8(out?).ok()?;
    Some((joined, runs))
}

#[cfg(test)]
mod tests {
    use super::view;

    #[test]
    fn adjacent_pieces_are_joined_in_place() {
        let t = "KEY = os.getenv(\n    \"KEY\",\n    \"SG.CGvSkm\"\n    \"rs9NM3a0IT\"\n    \".Knp7kOAUM\",\n)\nX = 1\n";
        let (v, runs) = view(t).expect("a run");
        assert_eq!(runs.len(), 1);
        assert_eq!(
            &t[runs[0].0..runs[0].1],
            "\"SG.CGvSkm\"\n    \"rs9NM3a0IT\"\n    \".Knp7kOAUM\""
        );
        assert_eq!(v.len(), t.len());
        assert_eq!(v.matches('\n').count(), t.matches('\n').count());
        assert!(v.contains("\"SG.CGvSkmrs9NM3a0IT.Knp7kOAUM\""), "{v}");
        assert!(v.ends_with(",\n)\nX = 1\n"), "{v}");
        let plus = "t = 'ghp_0ieJn7Bem' + 'Z7z1Mc0xmgKiCy9H4El'\n";
        assert!(
            view(plus)
                .unwrap()
                .0
                .contains("'ghp_0ieJn7BemZ7z1Mc0xmgKiCy9H4El'")
        );
        let cont = "T = \"abcdefghij\" \\\n    \"klmnopqrst\"\n";
        assert!(view(cont).unwrap().0.contains("\"abcdefghijklmnopqrst\""));
    }

    #[test]
    fn other_layouts_are_left_alone() {
        // Shell arguments on one line, a list, prose split over lines,
        // mixed quotes, short runs.
        for t in [
            "curl -H \"Authorization\" \"Bearer-abcdefghijklmnop\"\n",
            "X = [\n    \"abcdefghijklmnop\",\n    \"qrstuvwxyz012345\",\n]\n",
            "msg = (\"this is a long \"\n       \"message for users\")\n",
            "x = \"abcdefghij\"\n    'klmnopqrst'\n",
            "x = \"ab\"\n    \"cd\"\n",
        ] {
            assert!(view(t).is_none(), "{t}");
        }
    }
}
