//! The anchor: perft over the `haitaka` crate (MIT), shared by the criterion bench and the
//! perft example so both time the same driver.

/// Perft of `board` to `depth`; with `bulk`, the last ply counts moves without making them.
pub fn haitaka_perft(board: &haitaka::Board, depth: u8, bulk: bool) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    if bulk && depth == 1 {
        board.generate_board_moves(|m| {
            nodes += m.into_iter().len() as u64;
            false
        });
        board.generate_drops(|m| {
            nodes += m.into_iter().len() as u64;
            false
        });
        return nodes;
    }
    let mut visit = |mv| {
        let mut b = board.clone();
        b.play_unchecked(mv);
        nodes += haitaka_perft(&b, depth - 1, bulk);
    };
    board.generate_board_moves(|m| {
        m.into_iter().for_each(&mut visit);
        false
    });
    board.generate_drops(|m| {
        m.into_iter().for_each(&mut visit);
        false
    });
    nodes
}
