//! Spare games and move lists: a simulation copies the root's game into the storage of
//! one that finished (`Clone::clone_from` keeps the histories' allocations) and fills a
//! used move list, instead of allocating both anew.

use shogi_game::Game;

use super::Search;

impl<G: Game> Search<G> {
    /// A copy of `game` in a spare game's storage when there is one.
    pub(super) fn copy_game(&mut self, game: &G) -> G {
        match self.spare_games.pop() {
            Some(mut spare) => {
                spare.clone_from(game);
                spare
            }
            None => game.clone(),
        }
    }

    /// Keeps a simulation's game and move list for the next simulations (a batch's
    /// worth at most).
    pub(super) fn recycle(&mut self, game: G, mut moves: Vec<G::Move>) {
        let keep = 2 * self.config.tree_batch.max(1);
        if self.spare_games.len() < keep {
            self.spare_games.push(game);
        }
        if self.spare_moves.len() < keep && moves.capacity() > 0 {
            moves.clear();
            self.spare_moves.push(moves);
        }
    }
}
