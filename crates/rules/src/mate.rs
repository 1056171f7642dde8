//! Mate search (詰将棋): a best-first proof-number search over an AND/OR tree in which the
//! attacker (the side to move at the root) only plays checking moves and the defender
//! plays every legal reply.
//!
//! - OR node (attacker to move): proven when one child is proven; disproven when it has
//!   no checking move (or it is deeper than [`MateLimits::max_plies`]).
//! - AND node (defender to move): proven when it has no legal move (checkmate) or when
//!   every reply is proven; disproven when one reply is disproven.
//!
//! Legality comes from the rules core, so a pawn-drop mate (打ち歩詰め) is never among the
//! attacker's moves. A position met before, earlier on the line or (for
//! [`search_mate_after`]) in the game that reached the root, fails for the attacker: a
//! repetition could end the game there (a draw, or under the fourfold or a twofold rule
//! a loss for the attacker, whose every move checks: 連続王手の千日手), so no proven line
//! passes through one. That may miss a mate the fourfold rule would still allow (one
//! that passes a position once more); it never claims one the rules would not give. A
//! new child AND node starts with the number of the defender's replies as its proof
//! number (the df-pn+ style heuristic that favours checks leaving few escapes).
//!
//! The returned line is a proven mate: the attacker's moves are the shortest proven
//! continuation at each node found, the defender's replies the longest-resisting proven
//! ones, so it is a correct mating line though not always the shortest possible one.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::{Move, Position};

const INF: u64 = 1 << 40;
const NONE: u32 = u32::MAX;

/// Limits of one mate search.
#[derive(Clone, Debug)]
pub struct MateLimits {
    /// Give up (timeout) after this instant.
    pub deadline: Option<Instant>,
    /// Give up when this flag is raised.
    pub stop: Option<Arc<AtomicBool>>,
    /// Give up when the tree holds this many nodes.
    pub max_nodes: usize,
    /// Attacker lines longer than this many plies are treated as failing (so `NoMate`
    /// means "no mate within `max_plies` plies").
    pub max_plies: u32,
}

impl Default for MateLimits {
    fn default() -> Self {
        MateLimits {
            deadline: None,
            stop: None,
            max_nodes: 2_000_000,
            max_plies: 63,
        }
    }
}

/// What a mate search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MateResult {
    /// The side to move mates with this line (attacker, defender, ..., attacker).
    Mate(Vec<Move>),
    /// No forced mate by checks within the ply limit.
    NoMate,
    /// Time, node budget or stop flag ran out first.
    Timeout,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    mv: Option<Move>,
    parent: u32,
    first: u32,
    len: u32,
    pn: u64,
    dn: u64,
    /// Mate length in plies once proven.
    mate_len: u32,
    expanded: bool,
    /// Attacker to move.
    or_node: bool,
    ply: u32,
}

impl Node {
    /// A new, unexpanded OR node (the attacker to move) after `mv` from `parent`.
    fn attacker_to_move(mv: Option<Move>, parent: u32, ply: u32) -> Node {
        Node {
            mv,
            parent,
            first: 0,
            len: 0,
            pn: 1,
            dn: 1,
            mate_len: 0,
            expanded: false,
            or_node: true,
            ply,
        }
    }
}

/// Statistics of the last search.
#[derive(Clone, Copy, Debug, Default)]
pub struct MateStats {
    /// Nodes created.
    pub nodes: usize,
    /// Expansions done.
    pub expansions: u64,
}

/// Searches for a forced mate by the side to move in `root` (a position with no game
/// before it: a tsume problem).
pub fn search_mate(root: &Position, limits: &MateLimits) -> (MateResult, MateStats) {
    search_mate_after(root, &[], limits)
}

/// Searches for a forced mate by the side to move in `root`, a position reached by a
/// game whose earlier positions have the keys `history` (the root's own key may be
/// among them): no proven line passes through any of them, nor repeats a position of
/// its own, since the game's repetition rule could end it there short of the mate.
pub fn search_mate_after(
    root: &Position,
    history: &[u64],
    limits: &MateLimits,
) -> (MateResult, MateStats) {
    // Zobrist keys are random already: a fast hash, not SipHash, on every child's key.
    let history: HashSet<u64, foldhash::fast::FixedState> = history.iter().copied().collect();
    // Keys of the positions from the root to the node being expanded.
    let mut path: Vec<u64> = Vec::new();
    let mut nodes: Vec<Node> = vec![Node::attacker_to_move(None, NONE, 0)];
    let mut stats = MateStats::default();
    let mut iter = 0u64;
    loop {
        let r = nodes[0];
        if r.pn == 0 {
            let pv = extract_pv(&nodes);
            stats.nodes = nodes.len();
            return (MateResult::Mate(pv), stats);
        }
        if r.dn == 0 {
            stats.nodes = nodes.len();
            return (MateResult::NoMate, stats);
        }
        iter += 1;
        if nodes.len() >= limits.max_nodes
            || limits
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
            || (iter.is_multiple_of(64) && limits.deadline.is_some_and(|d| Instant::now() >= d))
        {
            stats.nodes = nodes.len();
            return (MateResult::Timeout, stats);
        }
        // Select the most-proving node.
        let mut pos = root.clone();
        let mut n = 0usize;
        path.clear();
        path.push(root.key());
        while nodes[n].expanded {
            let node = nodes[n];
            let range = node.first as usize..(node.first + node.len) as usize;
            let mut best: Option<usize> = None;
            for c in range {
                if nodes[c].pn == 0 || nodes[c].dn == 0 {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) if node.or_node => nodes[c].pn < nodes[b].pn,
                    Some(b) => nodes[c].dn < nodes[b].dn,
                };
                if better {
                    best = Some(c);
                }
            }
            let Some(best) = best else {
                // Only solved children below an unsolved node (bound saturation): give up.
                stats.nodes = nodes.len();
                return (MateResult::Timeout, stats);
            };
            pos.play_unchecked(nodes[best].mv.expect("child has a move"));
            path.push(pos.key());
            n = best;
        }
        let seen = |key: u64| history.contains(&key) || path.contains(&key);
        expand(&mut nodes, n, &pos, limits.max_plies, seen);
        stats.expansions += 1;
        // Back up.
        let mut cur = n;
        loop {
            update(&mut nodes, cur);
            let p = nodes[cur].parent;
            if p == NONE {
                break;
            }
            cur = p as usize;
        }
    }
}

/// A node that fails for the attacker without being searched: a position already met
/// (see [`search_mate_after`]). Never selected, never expanded.
fn repeated_node(mv: Move, parent: usize, or_node: bool, ply: u32) -> Node {
    Node {
        mv: Some(mv),
        parent: parent as u32,
        first: 0,
        len: 0,
        pn: INF,
        dn: 0,
        mate_len: 0,
        expanded: false,
        or_node,
        ply,
    }
}

/// Expands node `n` (position `pos`); `seen` tells whether a position (by key) was met
/// before on the line or in the game.
fn expand(
    nodes: &mut Vec<Node>,
    n: usize,
    pos: &Position,
    max_plies: u32,
    seen: impl Fn(u64) -> bool,
) {
    let node = nodes[n];
    nodes[n].expanded = true;
    let first = nodes.len() as u32;
    if node.or_node {
        if node.ply + 1 > max_plies {
            return; // no children: disproven by `update`
        }
        // The attacker plays checks only: generated as such, never the other moves.
        for &mv in pos.checking_moves(&pos.check_info()).iter() {
            let after = pos.after(mv);
            let replies = after.legal_move_count() as u64;
            if replies > 0 && seen(after.key()) {
                nodes.push(repeated_node(mv, n, false, node.ply + 1));
                continue;
            }
            let (pn, dn, expanded) = if replies == 0 {
                (0, INF, true)
            } else {
                (replies, 1, false)
            };
            nodes.push(Node {
                mv: Some(mv),
                parent: n as u32,
                first: 0,
                len: 0,
                pn,
                dn,
                mate_len: 0,
                expanded,
                or_node: false,
                ply: node.ply + 1,
            });
        }
    } else {
        for &mv in pos.legal_moves().iter() {
            if seen(pos.key_after(mv)) {
                // The defender escapes into a repetition.
                nodes.push(repeated_node(mv, n, true, node.ply + 1));
                continue;
            }
            nodes.push(Node::attacker_to_move(Some(mv), n as u32, node.ply + 1));
        }
    }
    nodes[n].first = first;
    nodes[n].len = nodes.len() as u32 - first;
}

fn update(nodes: &mut [Node], n: usize) {
    let node = nodes[n];
    if !node.expanded {
        return;
    }
    let range = node.first as usize..(node.first + node.len) as usize;
    if node.or_node {
        let mut pn = INF;
        let mut dn = 0u64;
        let mut len = u32::MAX;
        for c in range {
            pn = pn.min(nodes[c].pn);
            dn = (dn + nodes[c].dn).min(INF);
            if nodes[c].pn == 0 {
                len = len.min(nodes[c].mate_len + 1);
            }
        }
        // No checking move: pn = INF, dn = 0.
        nodes[n].pn = pn;
        nodes[n].dn = dn;
        nodes[n].mate_len = if pn == 0 { len } else { 0 };
    } else {
        if node.len == 0 {
            // Checkmate (the defender has no legal move).
            nodes[n].pn = 0;
            nodes[n].dn = INF;
            nodes[n].mate_len = 0;
            return;
        }
        let mut pn = 0u64;
        let mut dn = INF;
        let mut len = 0u32;
        for c in range {
            pn = (pn + nodes[c].pn).min(INF);
            dn = dn.min(nodes[c].dn);
            len = len.max(nodes[c].mate_len + 1);
        }
        nodes[n].pn = pn;
        nodes[n].dn = dn;
        nodes[n].mate_len = if pn == 0 { len } else { 0 };
    }
}

fn extract_pv(nodes: &[Node]) -> Vec<Move> {
    let mut pv = Vec::new();
    let mut n = 0usize;
    loop {
        let node = nodes[n];
        if !node.expanded || node.len == 0 {
            break;
        }
        let range = node.first as usize..(node.first + node.len) as usize;
        let next = if node.or_node {
            range
                .filter(|&c| nodes[c].pn == 0)
                .min_by_key(|&c| nodes[c].mate_len)
        } else {
            range
                .filter(|&c| nodes[c].pn == 0)
                .max_by_key(|&c| nodes[c].mate_len)
        };
        let Some(c) = next else { break };
        pv.push(nodes[c].mv.expect("child has a move"));
        n = c;
    }
    pv
}

/// Checks that `line` is a legal mating line from `root`: every attacker move gives
/// check, and the position after the last move is checkmate.
pub fn is_mating_line(root: &Position, line: &[Move]) -> bool {
    if line.is_empty() || line.len().is_multiple_of(2) {
        return false;
    }
    let mut pos = root.clone();
    for (i, &mv) in line.iter().enumerate() {
        if !pos.is_legal(mv) {
            return false;
        }
        pos.play_unchecked(mv);
        if i % 2 == 0 && !pos.in_check() {
            return false;
        }
    }
    pos.is_checkmate()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    fn solve(sfen: &str) -> MateResult {
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        search_mate(&pos, &MateLimits::default()).0
    }

    #[test]
    fn head_gold_mate_in_one() {
        // Gold drop on 5b, supported by the pawn on 5c.
        let r = solve("4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/4P4/9/9/9/9/9/4K4 b G 1").unwrap();
        match r {
            MateResult::Mate(line) => {
                assert_eq!(line.len(), 1);
                assert!(is_mating_line(&pos, &line));
            }
            other => panic!("expected a mate, got {other:?}"),
        }
    }

    #[test]
    fn bare_kings_no_mate() {
        assert_eq!(solve("4k4/9/9/9/9/9/9/9/4K4 b - 1"), MateResult::NoMate);
    }
}
