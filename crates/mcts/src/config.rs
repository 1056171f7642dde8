//! Search configuration: every knob with its unit and default.
//!
//! [`SearchConfig::default`] is the search a training run's self-play uses (the run
//! config, `shogi-zero selfplay` and the docs read their defaults from it);
//! [`SearchConfig::for_play`] is the strength-play search of matches, the gate and the
//! USI engine, and names each of its differences. Other crates take their defaults from
//! these two rather than writing numbers of their own.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::knobs::{Knob, KnobKind, KnobRole, PlayForm};
use crate::result::{SearchResult, StopReason};

/// A search knob: one of [`SEARCH_KNOBS`], over [`SearchConfig`] and, at play time,
/// [`RootSettings`].
pub type SearchKnob = Knob<SearchConfig, RootSettings>;

/// How the root (and interior nodes) choose which child to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootSelection {
    /// AlphaZero PUCT everywhere, Dirichlet noise at the root, move chosen from visit
    /// counts with the temperature schedule; the policy target is the visit distribution.
    Puct,
    /// Gumbel AlphaZero (Danihelka et al. 2022) at the root: Gumbel-top-k sampling of
    /// `gumbel_considered` actions, sequential halving over the budget, move =
    /// argmax g + logits + sigma(completed Q), policy target = softmax(logits + sigma(completed Q)).
    /// Interior nodes use [`SearchConfig::gumbel_interior`].
    Gumbel,
}

impl RootSelection {
    /// The name used in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RootSelection::Puct => "puct",
            RootSelection::Gumbel => "gumbel",
        }
    }
}

impl std::fmt::Display for RootSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A root selection name that is neither `puct` nor `gumbel`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown root selection {0:?} (expected puct or gumbel)")]
pub struct UnknownRootSelection(pub String);

impl std::str::FromStr for RootSelection {
    type Err = UnknownRootSelection;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "puct" => Ok(RootSelection::Puct),
            "gumbel" => Ok(RootSelection::Gumbel),
            other => Err(UnknownRootSelection(other.to_string())),
        }
    }
}

/// Interior (non-root) selection rule when [`RootSelection::Gumbel`] is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GumbelInterior {
    /// The paper's deterministic rule: argmax_a pi'(a) - N(a) / (1 + sum_b N(b)),
    /// with pi' = softmax(logits + sigma(completed Q)) (no noise below the root).
    #[default]
    Deterministic,
    /// Plain PUCT (with FPU reduction) below the root.
    Puct,
}

/// Every search knob. `Deserialize` fills missing fields with the defaults below.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default)]
pub struct SearchConfig {
    /// Simulation (playout) budget per `search` call when the limits do not override it.
    /// Counts leaf playouts below the root; the root's own evaluation is not counted.
    /// Default 64, a training run's (AlphaZero searched 800, [`SearchConfig::alphazero`]:
    /// a CPU run plays a few thousand games an hour and needs cheaper moves).
    pub simulations: u32,
    /// Largest number of leaves gathered, evaluated in one evaluator batch and backed up
    /// together (simulations in flight per tree). 1 = classic sequential MCTS. Default 4
    /// (self-play keeps many trees in flight, so each needs few); strength play uses
    /// [`PLAY_TREE_BATCH`].
    pub tree_batch: usize,
    /// Virtual loss per in-flight simulation, in visits: each pending simulation through a
    /// node counts as this many extra visits that scored a loss for the chooser.
    /// Default 1.0.
    pub virtual_loss: f32,
    /// A gather round stops after this many collisions (a selection reaching a leaf that is
    /// already waiting for evaluation). Default 8.
    pub max_collisions: usize,
    /// PUCT c_init (dimensionless). Default 1.25 (AlphaZero). The exploration term is
    /// c(s) * P(a) * sqrt(N(s)) / (1 + N(a)) with c(s) = ln((1 + N(s) + c_base) / c_base) + c_init,
    /// where N(s) counts the node's own evaluation plus its children's visits (and virtual
    /// visits in flight).
    pub c_init: f32,
    /// PUCT c_base (visits). Default 19652 (AlphaZero).
    pub c_base: f32,
    /// First-play urgency reduction: an unvisited child gets
    /// Q = parent Q - fpu_reduction * sqrt(sum of priors of visited children).
    /// Default 0.25 (dlshogi 0.27, lc0 0.33).
    pub fpu_reduction: f32,
    /// FPU reduction used at the root instead of `fpu_reduction` (lc0 uses a larger /
    /// absolute value at the root in training). Default 0.25.
    pub fpu_reduction_root: f32,
    /// Dirichlet noise concentration alpha at the root (PUCT only). Default 0.15 (AlphaZero shogi).
    pub dirichlet_alpha: f32,
    /// Weight epsilon of the Dirichlet noise: P = (1-eps) P + eps * Dir(alpha).
    /// 0 disables noise (play/arena). Default 0.25.
    pub dirichlet_weight: f32,
    /// Temperature used for plies `< temperature_plies` (game ply from `Game::ply`).
    /// Default 1.0.
    pub temperature: f32,
    /// Number of opening plies played with `temperature` (a PUCT root; a Gumbel root's
    /// noise samples every move). Default 12, a training run's (AlphaZero sampled 30,
    /// [`SearchConfig::alphazero`]).
    pub temperature_plies: u32,
    /// Temperature after the opening; 0 = most visited move. Default 0.0.
    pub temperature_after: f32,
    /// Keep the subtree of the played move between moves (`Search::advance`). Default true.
    pub tree_reuse: bool,
    /// Stop a search early once the root's game-theoretic value is proven. Default true.
    pub stop_when_proven: bool,
    /// At expansion, play every child move and ask `Game::outcome` so immediate wins
    /// (mate in 1) are known without visiting them. Costs one clone + play per legal move
    /// and expansion. Default false.
    pub terminal_check: bool,
    /// Before simulating, a mate search (df-pn, [`shogi_game::Game::find_mate`]) of at
    /// most this many nodes runs from the root; a forced mate it proves makes the mating
    /// move a proven win, played at once (dlshogi's root mate search). Full searches;
    /// a playout cap's cheap moves run [`SearchConfig::cheap_root_mate_nodes`]
    /// ([`SearchConfig::root_mate_budget`]). 0 = off (also for variants without a mate
    /// solver). Default 0.
    pub root_mate_nodes: usize,
    /// The root mate search's nodes on a playout cap's cheap move. 0 (the default): cheap
    /// moves skip it, so a mate that appears on one waits for the side's next full search
    /// (one move in four at `full_search_prob = 0.25`), or is found by the tree's
    /// terminal checks when it is a mate in one.
    pub cheap_root_mate_nodes: usize,
    /// At every new leaf below the root, a mate search for the side to move of at most
    /// this many nodes and [`SearchConfig::leaf_mate_plies`] plies; a mate it proves makes
    /// the leaf a proven win, valued without the network (dlshogi checks odd-ply mates
    /// up to 5 plies at its leaves). 0 = off (also for variants without a mate solver).
    /// Default 0.
    pub leaf_mate_nodes: usize,
    /// The longest mate, in plies, the leaf mate search looks for. Default 5.
    pub leaf_mate_plies: u32,
    /// At every network leaf, the side to move's value is raised by what it wins at once
    /// by static exchange (its best capture and the recaptures on that square, on the
    /// mobility values): `score + leaf_exchange * tanh(12 * gain / material) * (1 -
    /// score)` ([`crate::raise_by_exchange`]), a one-step quiescence, so a move that
    /// leaves a piece en prise is valued as losing it one ply later although the network
    /// does not see it. 0..=1; 0 = off (also for variants without an exchange count).
    /// Default 0.
    pub leaf_exchange: f32,
    /// Largest number of tree nodes; the search stops (after the current batch) when the
    /// arena reaches it. Default 10,000,000.
    pub max_nodes: usize,
    /// Root selection rule. Default `gumbel` (learns at small budgets, Danihelka et al.);
    /// strength play uses `puct`.
    pub root_selection: RootSelection,
    /// Gumbel: number of root actions m sampled by Gumbel-top-k. Default 16.
    pub gumbel_considered: usize,
    /// Gumbel: sigma(q) = (c_visit + max_b N(b)) * c_scale * q. Default 50.
    pub gumbel_c_visit: f32,
    /// Gumbel: c_scale, see `gumbel_c_visit`. Default 1.0.
    pub gumbel_c_scale: f32,
    /// Gumbel: every root move that wins material by static exchange
    /// ([`shogi_game::Game::wins_material`]) is among the considered moves, the Gumbel
    /// top-k filling the rest, so a free piece is always searched however low its prior
    /// (at most `gumbel_considered` of them, the first in move order). Default false.
    pub gumbel_captures: bool,
    /// Gumbel: each root move's prior is scaled by `exp(-gumbel_safety * excess)` and the
    /// priors renormalised, `excess` what the move loses by static exchange one ply later
    /// beyond the least any move loses ([`shogi_game::Game::static_loss_after`], in the
    /// rules' mobility swing: a pawn 2, a silver 10, a rook 32). The root's choice and its
    /// improved policy (the policy target) then leave a piece en prise only where the
    /// search's values outweigh the penalty. 0 = off. Default 0.
    pub gumbel_safety: f32,
    /// Gumbel: the mirror of [`Self::gumbel_safety`]: each root move's logit gains
    /// `gumbel_gain` per point it wins by static exchange one ply later (the negative of
    /// [`shogi_game::Game::static_loss_after`]: what it takes, less the opponent's best
    /// exchange after it), so the root takes a free piece unless the search's values say
    /// otherwise. 0 = off. Default 0.
    pub gumbel_gain: f32,
    /// Gumbel: add Gumbel(0,1) noise to the root logits (self-play). Off = deterministic
    /// (evaluation games). Default true.
    pub gumbel_noise: bool,
    /// Gumbel: min-max rescale completed Q values to [0, 1] before sigma (mctx default).
    /// Values here are expected scores already in [0, 1]. Default false.
    pub gumbel_rescale_q: bool,
    /// Gumbel: interior selection rule. Default deterministic.
    pub gumbel_interior: GumbelInterior,
    /// Playout cap randomization (KataGo): the share of moves (0..=1) searched with the
    /// full budget and recorded as policy targets; the others get
    /// [`Self::cheap_simulations`], no root noise (a Gumbel root keeps its noise, which
    /// makes the move choice stochastic) and `is_full_search = false`. 1 = every search
    /// is full (no cap). Default 1.
    pub full_search_prob: f32,
    /// Playout cap randomization: the simulations of a cheap search. Default 8 (KataGo's
    /// ratio of 100 to 800, at this crate's default budget of 64).
    pub cheap_simulations: u32,
    /// A leaf the rules end at the ply cap goes to the side this many material points
    /// ahead ([`shogi_game::adjudicate`]), as self-play with adjudication records it; 0 =
    /// the rules' draw. Default 0.
    pub adjudicate_margin: u32,
    /// What a draw (a finished one inside the tree: repetition, the ply cap, a proven
    /// draw) is worth to the side to move at the root, as an expected score. 0.5 is
    /// neutral; lower makes that side play on rather than draw (contempt, for a player
    /// expecting to be the stronger), and the opponent's draws are worth the
    /// complement. Network values are not changed. Default 0.5.
    pub draw_value: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            simulations: 64,
            tree_batch: 4,
            virtual_loss: 1.0,
            max_collisions: 8,
            c_init: 1.25,
            c_base: 19652.0,
            fpu_reduction: 0.25,
            fpu_reduction_root: 0.25,
            dirichlet_alpha: 0.15,
            dirichlet_weight: 0.25,
            temperature: 1.0,
            temperature_plies: 12,
            temperature_after: 0.0,
            tree_reuse: true,
            stop_when_proven: true,
            terminal_check: false,
            root_mate_nodes: 0,
            cheap_root_mate_nodes: 0,
            leaf_mate_nodes: 0,
            leaf_mate_plies: 5,
            leaf_exchange: 0.0,
            max_nodes: 10_000_000,
            root_selection: RootSelection::Gumbel,
            gumbel_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            gumbel_captures: false,
            gumbel_safety: 0.0,
            gumbel_gain: 0.0,
            gumbel_noise: true,
            gumbel_rescale_q: false,
            gumbel_interior: GumbelInterior::Deterministic,
            full_search_prob: 1.0,
            cheap_simulations: 8,
            adjudicate_margin: 0,
            draw_value: 0.5,
        }
    }
}

/// One entry of [`SEARCH_KNOBS`]: the field of the same name (`switch` for a `bool`,
/// `number` otherwise), its kind, `[min, above_min, max]`, unit, role, play-time form
/// (`solo`, or `play(gumbel_only, hand_written)` for a field also in [`RootSettings`]),
/// meaning, and old names.
macro_rules! knob {
    (@play solo $access:ident $field:ident) => { None };
    (@play play $access:ident $field:ident ($gumbel_only:expr, $hand_written:expr)) => {{
        let (get, set) = $crate::knob_access!($access, RootSettings, $field);
        Some(PlayForm { gumbel_only: $gumbel_only, hand_written: $hand_written, get, set })
    }};
    ($field:ident: $access:ident $kind:ident, [$min:expr, $above:expr, $max:expr], $unit:expr, $role:ident,
     $play:ident $(($gumbel_only:expr, $hand_written:expr))?, $meaning:expr $(, $alias:expr)*) => {{
        let (get, set) = $crate::knob_access!($access, SearchConfig, $field);
        Knob {
            key: stringify!($field), aliases: &[$($alias),*], kind: KnobKind::$kind,
            min: $min as f64, above_min: $above, max: $max as f64, unit: $unit,
            role: KnobRole::$role, meaning: $meaning, get, set,
            play: knob!(@play $play $access $field $(($gumbel_only, $hand_written))?),
        }
    }};
}

/// The largest value of a node, ply or simulation count knob.
const MAX_COUNT: f64 = 1e9;

/// Every search knob a run config, a command or the USI engine sets, described once:
/// the run config's `[selfplay]` keys (and `[play]` for a play knob), the range checks,
/// the `match`/`curve` flags and the USI options are all read from here, and
/// docs/SEARCH.md's table is [`crate::knobs::knob_table`]'s. The defaults are
/// [`SearchConfig::default`]'s (self-play) and [`RootSettings::default`]'s (play).
#[rustfmt::skip]
pub static SEARCH_KNOBS: &[SearchKnob] = &[
    knob!(simulations: number Count, [1, false, MAX_COUNT], "simulations", Core, solo,
        "Simulations (leaf playouts below the root) per move."),
    Knob {
        key: "root", aliases: &[], kind: KnobKind::Choice(&["puct", "gumbel"]),
        min: 0.0, above_min: false, max: 1.0, unit: "", role: KnobRole::Core, play: None,
        meaning: "How the root chooses what to simulate: `gumbel` (sequential halving; learns at small budgets) or `puct` (AlphaZero, Dirichlet noise, visit-count temperature).",
        get: |c| match c.root_selection { RootSelection::Puct => 0.0, RootSelection::Gumbel => 1.0 },
        set: |c, v| c.root_selection = if v == 0.0 { RootSelection::Puct } else { RootSelection::Gumbel },
    },
    knob!(gumbel_considered: number Count, [1, false, 1024], "moves", Core, solo,
        "Gumbel: root moves sampled by Gumbel-top-k and searched by sequential halving."),
    knob!(gumbel_captures: switch Switch, [0, false, 1], "", Lever, play(true, true),
        "Gumbel: every root move that wins material by static exchange is among the considered ones."),
    knob!(gumbel_safety: number Real, [0, false, 100], "logits a point", Lever, play(true, true),
        "Gumbel: a root move's logit loses this per point it loses by static exchange one ply later beyond the least any move loses (pawn 2, silver 10, rook 32)."),
    knob!(gumbel_gain: number Real, [0, false, 100], "logits a point", Lever, play(true, true),
        "Gumbel: a root move's logit gains this per point it wins by static exchange one ply later."),
    knob!(gumbel_c_scale: number Real, [0, true, 100], "", Core, play(true, false),
        "Gumbel: how far searched values move the root's choice and policy target: sigma(q) = (50 + max visits) x c_scale x q."),
    knob!(tree_batch: number Count, [1, false, 1024], "leaves", Core, solo,
        "Leaves gathered under virtual loss and evaluated together per tree."),
    knob!(terminal_check: switch Switch, [0, false, 1], "", Lever, solo,
        "At each expansion, play every child and ask the rules whether it ends the game (a mate in one is exact anywhere in the tree)."),
    knob!(root_mate_nodes: number Count, [0, false, MAX_COUNT], "nodes", Lever, solo,
        "Mate search (df-pn) from the root before a full search's simulations; a proven mate is played at once (0 = off; tai shogi has no mate solver and ignores it).",
        "mate_search_nodes"),
    knob!(cheap_root_mate_nodes: number Count, [0, false, MAX_COUNT], "nodes", Lever, solo,
        "The root mate search's nodes on a playout cap's cheap move (0 = cheap moves skip it).",
        "cheap_mate_search_nodes"),
    knob!(leaf_mate_nodes: number Count, [0, false, MAX_COUNT], "nodes", Experimental, play(false, false),
        "Mate search at every new leaf (mates of up to 5 plies make it a proven win without the network; 0 = off; tai shogi ignores it)."),
    knob!(leaf_exchange: number Real, [0, false, 1], "", Experimental, play(false, true),
        "Weight of what the side to move wins at once by static exchange in every network leaf's value, a one-step quiescence (0 = off; tai shogi ignores it)."),
    knob!(full_search_prob: number Real, [0, false, 1], "", Lever, solo,
        "Playout cap randomization (KataGo): the share of moves searched in full and recorded as samples (1 = every move)."),
    knob!(cheap_simulations: number Count, [1, false, MAX_COUNT], "simulations", Lever, solo,
        "Playout cap randomization: the simulations of a cheap move."),
    knob!(dirichlet_alpha: number Real, [0, true, 100], "", Core, solo,
        "PUCT root: Dirichlet noise concentration (AlphaZero shogi 0.15)."),
    knob!(dirichlet_weight: number Real, [0, false, 1], "", Core, solo,
        "PUCT root: Dirichlet noise weight (0 = none)."),
    knob!(fpu_reduction: number Real, [0, false, 2], "", Core, solo,
        "PUCT below the root: an unvisited child is valued at its parent's value less this x sqrt(visited children's prior mass)."),
    knob!(temperature_plies: number Count, [0, false, MAX_COUNT], "plies", Core, solo,
        "PUCT root: opening plies played by visit-count sampling (a Gumbel root's noise samples instead)."),
];

/// A knob measured, not adopted and taken out of the code (docs/EXPERIMENTS.md keeps its
/// result and names the commit that removed it, so it can be brought back). A run
/// directory's config written before still names it: read at its off value, which is
/// the search without it, and refused at any other.
#[derive(Clone, Copy, Debug)]
pub struct RetiredKnob {
    /// Its key.
    pub key: &'static str,
    /// The value that meant "off" (`false` as 0).
    pub off: f64,
}

/// The retired search knobs.
pub static RETIRED_KNOBS: &[RetiredKnob] = &[
    RetiredKnob {
        key: "gumbel_safe",
        off: 0.0,
    },
    RetiredKnob {
        key: "gumbel_noise_plies",
        off: 0.0,
    },
];

/// The search knob named `key` (or one of its old names).
pub fn knob(key: &str) -> Option<&'static SearchKnob> {
    crate::knobs::find(SEARCH_KNOBS, key)
}

/// The search knobs that are also play-time root options.
pub fn play_knobs() -> impl Iterator<Item = &'static SearchKnob> {
    SEARCH_KNOBS.iter().filter(|k| k.play.is_some())
}

/// Leaves evaluated together per tree in strength play (matches, the gate): a game has
/// one tree, so it gathers more leaves per request than a self-play tree among many.
pub const PLAY_TREE_BATCH: usize = 8;

impl SearchConfig {
    /// Nodes of the root mate search before a search of `budget` simulations whose full
    /// budget is `full_budget`: [`SearchConfig::root_mate_nodes`] for a full search,
    /// [`SearchConfig::cheap_root_mate_nodes`] (none by default) for a playout cap's
    /// cheap move. A cheap move is no training sample, and with a nearly free network
    /// (a GPU) a 3,000-node mate search costs more than its 8 simulations.
    pub fn root_mate_budget(&self, budget: u32, full_budget: u32) -> usize {
        if budget >= full_budget {
            self.root_mate_nodes
        } else {
            self.cheap_root_mate_nodes
        }
    }

    /// Settings for strength play (arena, gate, engine): a PUCT root (the most visited
    /// move; `gumbel_considered` players opt into Gumbel), [`PLAY_TREE_BATCH`] leaves a
    /// request, no noise, temperature 0, every expanded child checked for a game end,
    /// so a mate in one is never missed because the prior ranked it low, and a
    /// 10,000-node mate search from the root, so a won game is mated rather than drawn
    /// at the ply cap (dlshogi does both). Simulations are the default's.
    pub fn for_play() -> Self {
        SearchConfig {
            root_selection: RootSelection::Puct,
            tree_batch: PLAY_TREE_BATCH,
            terminal_check: true,
            root_mate_nodes: 10_000,
            dirichlet_weight: 0.0,
            temperature: 0.0,
            temperature_after: 0.0,
            gumbel_noise: false,
            ..SearchConfig::default()
        }
    }

    /// AlphaZero's self-play search (Silver et al. 2018): a PUCT root with Dirichlet
    /// noise, 800 simulations in batches of [`PLAY_TREE_BATCH`], the first 30 plies
    /// sampled from the visit counts. The default is the smaller Gumbel search that
    /// learns more per CPU-hour; this is the reference it departs from.
    pub fn alphazero() -> Self {
        SearchConfig {
            simulations: 800,
            tree_batch: PLAY_TREE_BATCH,
            root_selection: RootSelection::Puct,
            temperature_plies: 30,
            ..SearchConfig::default()
        }
    }

    /// The move-selection temperature at `ply`.
    pub fn temperature_at(&self, ply: u32) -> f32 {
        if ply < self.temperature_plies {
            self.temperature
        } else {
            self.temperature_after
        }
    }
}

/// How a strength-play search's root searches beyond its simulations: the options a
/// run's self-play trained with, so that its networks are measured and played with the
/// search they were trained by (matches and curves with `--root-of RUN`, `learns.sh`, the
/// USI engine with a run's network). The default is [`SearchConfig::for_play`]'s PUCT
/// root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RootSettings {
    /// 0 for PUCT (temperature for the opening plies, then the most visited move), `k`
    /// for a noise-free Gumbel root considering `k` moves (sequential halving; the run's
    /// `selfplay.gumbel_considered` when its `selfplay.root` is `gumbel`).
    pub gumbel: usize,
    /// With a Gumbel root: every move that wins material by static exchange is among
    /// the considered ones ([`SearchConfig::gumbel_captures`]).
    pub gumbel_captures: bool,
    /// With a Gumbel root: the logits a move loses per point it leaves en prise beyond
    /// the least any move does ([`SearchConfig::gumbel_safety`]; 0 = off).
    pub gumbel_safety: f32,
    /// With a Gumbel root: the logits a move gains per point it wins by static exchange
    /// ([`SearchConfig::gumbel_gain`]; 0 = off).
    pub gumbel_gain: f32,
    /// With a Gumbel root: how far the searched values move the root's choice against the
    /// prior ([`SearchConfig::gumbel_c_scale`]).
    pub gumbel_c_scale: f32,
    /// Nodes of the mate search at every new leaf (0 = off;
    /// [`SearchConfig::leaf_mate_nodes`]).
    pub leaf_mate_nodes: usize,
    /// Weight of the side to move's static exchange gain in every network leaf's value
    /// (0 = off; [`SearchConfig::leaf_exchange`]), any root.
    pub leaf_exchange: f32,
}

impl Default for RootSettings {
    fn default() -> Self {
        let play = SearchConfig::for_play();
        RootSettings {
            gumbel: 0,
            gumbel_captures: false,
            gumbel_safety: play.gumbel_safety,
            gumbel_gain: play.gumbel_gain,
            gumbel_c_scale: play.gumbel_c_scale,
            leaf_mate_nodes: play.leaf_mate_nodes,
            leaf_exchange: play.leaf_exchange,
        }
    }
}

impl RootSettings {
    /// Sets these options in `config` (the Gumbel ones only with a Gumbel root).
    pub fn apply(&self, config: &mut SearchConfig) {
        if self.gumbel > 0 {
            config.root_selection = RootSelection::Gumbel;
            config.gumbel_considered = self.gumbel;
        }
        for knob in play_knobs() {
            let gumbel_only = knob.play.is_some_and(|p| p.gumbel_only);
            if let (Some(value), true) = (knob.get_at_play(self), self.gumbel > 0 || !gumbel_only) {
                knob.set(config, value);
            }
        }
    }

    /// The play-time root of a search: its Gumbel root (0 for PUCT) and every play
    /// knob's value.
    pub fn of_search(config: &SearchConfig) -> Self {
        let mut root = RootSettings {
            gumbel: match config.root_selection {
                RootSelection::Gumbel => config.gumbel_considered,
                RootSelection::Puct => 0,
            },
            ..RootSettings::default()
        };
        for knob in play_knobs() {
            knob.set_at_play(&mut root, knob.get(config));
        }
        root
    }

    /// The same root without the rules written by hand (the static-exchange aids): what
    /// the network owns of its strength (`--plain`).
    pub fn plain(&self) -> Self {
        let mut plain = self.clone();
        for knob in play_knobs() {
            if knob.play.is_some_and(|p| p.hand_written) {
                knob.set_at_play(&mut plain, 0.0);
            }
        }
        plain
    }

    /// What these settings search with, in words (the USI engine says it when it adopts
    /// a run's search): `Gumbel root of 8 moves, winning captures always considered,
    /// safety 2 logits a point` or `PUCT root`, and the leaf aids.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.gumbel > 0 {
            parts.push(format!("Gumbel root of {} moves", self.gumbel));
            if self.gumbel_captures {
                parts.push("winning captures always considered".into());
            }
            if self.gumbel_safety > 0.0 {
                parts.push(format!("safety {} logits a point", self.gumbel_safety));
            }
            if self.gumbel_gain > 0.0 {
                parts.push(format!("gain {} logits a point", self.gumbel_gain));
            }
            if self.gumbel_c_scale != SearchConfig::for_play().gumbel_c_scale {
                parts.push(format!("c_scale {}", self.gumbel_c_scale));
            }
        } else {
            parts.push("PUCT root".into());
        }
        if self.leaf_exchange > 0.0 {
            parts.push(format!("leaf exchange {}", self.leaf_exchange));
        }
        if self.leaf_mate_nodes > 0 {
            parts.push(format!("leaf mate search {} nodes", self.leaf_mate_nodes));
        }
        parts.join(", ")
    }
}

/// Share of the time left that a Gumbel root plans its simulations for: sequential
/// halving needs its budget before it starts, and the deadline cuts a search that runs
/// slower than measured.
pub const GUMBEL_TIME_SHARE: f64 = 0.9;

/// A searcher's measured speed, which a Gumbel root under a clock plans its simulations
/// with (sequential halving needs its budget before it starts): positions evaluated a
/// second, each new measure weighing half. Simulations that end at an exact value (a
/// game's end, a proven node) cost next to nothing and are not counted: a search of a
/// decided position runs hundreds of thousands of them a second, and a speed in
/// simulations would plan the next search far beyond its clock, to be cut by the
/// deadline. Where exact values are a share of a search, its plan falls short of the
/// clock and the searcher plans another with the time left.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchSpeed {
    evaluations_per_second: Option<f64>,
}

impl SearchSpeed {
    /// Takes in the speed of `result`, a search that ran to its simulations or its
    /// deadline and evaluated something (one stopped early or proven says nothing).
    pub fn observe<M>(&mut self, result: &SearchResult<M>) {
        let secs = result.elapsed.as_secs_f64();
        let measured = matches!(
            result.stop_reason,
            StopReason::Simulations | StopReason::Deadline
        );
        if measured && result.evaluations > 0 && secs > 0.0 {
            let now = f64::from(result.evaluations) / secs;
            self.evaluations_per_second = Some(
                self.evaluations_per_second
                    .map_or(now, |old| 0.5 * old + 0.5 * now),
            );
        }
    }

    /// The simulations to plan for `time`: [`GUMBEL_TIME_SHARE`] of the evaluations that
    /// fit at this speed, at most `limit`, at least 1; `None` before the first measure.
    pub fn budget(&self, time: Duration, limit: u32) -> Option<u32> {
        let rate = self.evaluations_per_second?;
        let fits = (rate * time.as_secs_f64() * GUMBEL_TIME_SHARE).clamp(0.0, f64::from(u32::MAX));
        Some((fits as u32).min(limit).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::SearchConfig;

    /// A full search (and every search without a playout cap) runs the root mate
    /// search; a playout cap's cheap move runs its own budget, none by default.
    #[test]
    fn root_mate_search_runs_before_full_searches_only() {
        let config = SearchConfig {
            root_mate_nodes: 3000,
            ..SearchConfig::default()
        };
        assert_eq!(config.root_mate_budget(32, 32), 3000);
        assert_eq!(config.root_mate_budget(8, 32), 0);
        assert_eq!(config.root_mate_budget(31, 32), 0);
        assert_eq!(config.root_mate_budget(64, 32), 3000);
        let off = SearchConfig::default();
        assert_eq!(off.root_mate_budget(8, 32), 0);
        let every_move = SearchConfig {
            cheap_root_mate_nodes: 3000,
            ..config
        };
        assert_eq!(every_move.root_mate_budget(8, 32), 3000);
        assert_eq!(every_move.root_mate_budget(32, 32), 3000);
    }
}
