//! What every variant's SFEN writer shares.

/// Appends one rank of an SFEN board to `out`: each piece's letters in order, each run
/// of empty squares (`None`) as its length.
pub fn push_sfen_rank<S: AsRef<str>>(
    out: &mut String,
    squares: impl IntoIterator<Item = Option<S>>,
) {
    let mut empty = 0u32;
    for square in squares {
        match square {
            None => empty += 1,
            Some(piece) => {
                if empty > 0 {
                    out.push_str(&empty.to_string());
                    empty = 0;
                }
                out.push_str(piece.as_ref());
            }
        }
    }
    if empty > 0 {
        out.push_str(&empty.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::push_sfen_rank;

    #[test]
    fn runs_of_empty_squares_become_their_lengths() {
        let mut out = String::new();
        push_sfen_rank(&mut out, [None, None, Some("+P"), None, Some("k")]);
        out.push('/');
        push_sfen_rank(&mut out, [None::<&str>; 12]);
        out.push('/');
        push_sfen_rank(&mut out, [Some("Ln"), Some("p")]);
        assert_eq!(out, "2+P1k/12/Lnp");
    }
}
