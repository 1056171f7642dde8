//! Proofs (詰み and draws proven in the tree): a node whose children settle its result
//! takes that result, and the proof climbs while it changes the parent.

use shogi_game::Game;

use super::Search;
use crate::tree::{NONE, Proven, State};

impl<G: Game> Search<G> {
    /// Recomputes proofs from `node` upward while they change.
    pub(super) fn update_proofs(&mut self, mut node: u32) {
        while node != NONE {
            let n = &self.nodes[node as usize];
            if n.state != State::Expanded || n.proven.is_known() {
                return;
            }
            let c = n.to_move;
            let mut best_win: Option<u32> = None;
            let mut all = true;
            let mut any_draw: Option<u32> = None;
            let mut max_loss = 0u32;
            for i in n.children() {
                match self.nodes[i].proven {
                    Proven::Win { winner, plies } if winner == c => {
                        best_win = Some(best_win.map_or(plies, |b| b.min(plies)));
                    }
                    Proven::Win { plies, .. } => max_loss = max_loss.max(plies),
                    Proven::Draw { plies } => {
                        any_draw = Some(any_draw.map_or(plies, |d| d.max(plies)))
                    }
                    Proven::Unknown => all = false,
                }
            }
            let p = if let Some(b) = best_win {
                Proven::Win {
                    winner: c,
                    plies: b + 1,
                }
            } else if all {
                match any_draw {
                    Some(d) => Proven::Draw { plies: d + 1 },
                    None => Proven::Win {
                        winner: c.flip(),
                        plies: max_loss + 1,
                    },
                }
            } else {
                return;
            };
            self.nodes[node as usize].proven = p;
            node = self.nodes[node as usize].parent;
        }
    }
}
