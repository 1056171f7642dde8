//! Training samples from self-play records: input planes, a policy target and a
//! win/draw/loss value target (stored sparsely), with optional left-right mirror
//! augmentation.

use rand::Rng;
use shogi_features::{FeatureSet, NetLayout};
use shogi_game::{Color, Game, GameKind, MaterialScale};
use shogi_records::ReplayError;
use shogi_records::record::{GameRecord, MoveRecord};
use shogi_records::variant_from_name;
use shogi_registry::NetGame;
use shogi_registry::RecordGame;
use shogi_registry::with_game_type;

/// One training position, stored sparsely: a tai shogi position has 129,375 input
/// floats and 191,250 policy entries, almost all zero. [`Sample::write_planes`] and
/// [`Sample::write_policy`] fill dense batch rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The variant's layout (fixes the plane and policy sizes).
    pub layout: NetLayout,
    /// Non-zero input entries `(index, value)`, increasing index.
    pub planes: Vec<(u32, f32)>,
    /// Non-zero policy target entries `(index, probability)`, summing to 1.
    pub policy: Vec<(u32, f32)>,
    /// Win/draw/loss target from the side to move's view.
    pub wdl: [f32; 3],
    /// The material target of a network with a material head, from the side to move's
    /// view: own minus the opponent's material points over their sum, -1..1,
    /// [`SampleConfig::material_plies`] later in the game.
    pub material: f32,
    /// The opponent's reply, the target of a network with the opponent-policy head
    /// ([`SampleConfig::opponent_policy`]): the next position's search policy, or the
    /// move played there where it was not searched in full, indexed as that position
    /// indexes its moves; `(index, probability)` summing to 1, increasing index. Empty at
    /// a game's last position and without the head.
    pub opponent_policy: Vec<(u32, f32)>,
}

/// How samples are built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleConfig {
    /// Blend of the search's root value into the value target, 0..=1.
    pub q_blend: f32,
    /// The input planes of the network being trained.
    pub features: FeatureSet,
    /// Plies after each position its material target is read (the game's last position
    /// when it ends sooner).
    pub material_plies: u32,
    /// Blend of the material outcome into the value target, 0..=1: the WDL target becomes
    /// `(1 - b) * target + b * [(1 + m) / 2, 0, (1 - m) / 2]` with `m =
    /// tanh(`[`Self::material_gain`]` * material)`, the material balance
    /// [`Self::material_plies`] later. A dense value signal: every position says what
    /// its exchanges will cost, not only the few thousand game results of an hour.
    pub material_value: f32,
    /// Gain of the material balance in that blend: how far a won piece moves the target
    /// ([`MATERIAL_VALUE_GAIN`] by default).
    pub material_gain: f32,
    /// The piece values of the material target and the material blend (shogi's impasse
    /// points, or each piece's mobility).
    pub material_scale: MaterialScale,
    /// Count in each material balance what the side to move wins by its best capture
    /// and the recaptures on that square ([`Game::exchange_gain`]): a piece left
    /// hanging counts as lost even when the game's players let it be. Self-play
    /// players that neither protect nor take pieces agree with a target read from
    /// their own games; this one comes from the rules.
    pub material_exchange: bool,
    /// Fill [`Sample::opponent_policy`] with the reply's targets (for a network with the
    /// opponent-policy head).
    pub opponent_policy: bool,
    /// The game of the network being trained: a record of another game (a chunk copied
    /// into the wrong replay directory) is refused, not turned into rows of another
    /// size. `None` takes every game.
    pub game: Option<GameKind>,
}

/// Default gain of the material balance in the value blend
/// ([`SampleConfig::material_gain`]): in shogi's 54 impasse points, a rook or bishop won
/// (a 10-point swing) scores 0.73, a pawn won 0.18 (`tanh(5 * swing / 54)`). On the
/// mobility scale (150 points) a pawn won scores only 0.07 and a silver 0.32; a gain of
/// about 12 gives the usual engine mapping there (a pawn 0.16, a silver 0.66: about
/// `tanh(cp / 1200)` with a pawn worth 90 cp on board or in hand).
pub const MATERIAL_VALUE_GAIN: f32 = 5.0;

impl Default for SampleConfig {
    fn default() -> Self {
        Self {
            q_blend: 0.0,
            features: FeatureSet::Pieces,
            material_plies: 8,
            material_value: 0.0,
            material_gain: MATERIAL_VALUE_GAIN,
            material_scale: MaterialScale::Impasse,
            material_exchange: false,
            opponent_policy: false,
            game: None,
        }
    }
}

/// Black's share of the material lead, (black - white) / (black + white): -1..1, 0 when
/// the variant counts no material or nothing is left. With `exchange`, the side to
/// move's best static exchange counts as won.
fn black_material_balance<G: Game>(game: &G, scale: MaterialScale, exchange: bool) -> f32 {
    match (
        game.material_on(Color::Black, scale),
        game.material_on(Color::White, scale),
    ) {
        (Some(b), Some(w)) if b + w > 0 => {
            let mut lead = b as f32 - w as f32;
            if exchange {
                let gain = game.exchange_gain(scale).unwrap_or(0) as f32;
                lead += match game.side_to_move() {
                    Color::Black => gain,
                    Color::White => -gain,
                };
            }
            (lead / (b + w) as f32).clamp(-1.0, 1.0)
        }
        _ => 0.0,
    }
}

/// The WDL of an outcome for `side`: (win, draw, loss).
fn outcome_wdl(winner: Option<Color>, side: Color) -> [f32; 3] {
    match winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == side => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    }
}

/// The policy target of a recorded move: its search's targets, normalised, increasing
/// index (`None` unless it was a full search with targets).
fn search_policy<G: NetGame + RecordGame>(game: &G, m: &MoveRecord) -> Option<Vec<(u32, f32)>> {
    if !m.full_search || m.searched.is_empty() {
        return None;
    }
    let mut policy: Vec<(u32, f32)> = Vec::with_capacity(m.searched.len());
    for s in &m.searched {
        let Some(idx) = G::move_from_code(s.mv).and_then(|mv| game.move_index(mv)) else {
            continue;
        };
        let t = s.target.max(0.0);
        match policy.iter_mut().find(|(i, _)| *i == idx as u32) {
            Some(entry) => entry.1 += t,
            None => policy.push((idx as u32, t)),
        }
    }
    policy.retain(|&(_, t)| t > 0.0);
    let sum: f32 = policy.iter().map(|&(_, t)| t).sum();
    if sum <= 0.0 {
        return None;
    }
    policy.iter_mut().for_each(|(_, t)| *t /= sum);
    policy.sort_unstable_by_key(|&(i, _)| i);
    Some(policy)
}

/// What a position's mover chose, as a policy target: the search's targets, or the
/// move played (a cheap search's or an unsearched ply's) with all the mass.
fn chosen_policy<G: NetGame + RecordGame>(game: &G, m: &MoveRecord) -> Vec<(u32, f32)> {
    search_policy(game, m).unwrap_or_else(|| {
        G::move_from_code(m.mv)
            .and_then(|mv| game.move_index(mv))
            .map(|idx| vec![(idx as u32, 1.0)])
            .unwrap_or_default()
    })
}

/// The sample of one recorded position, if it was a full search with targets.
fn sample_at<G: NetGame + RecordGame>(
    game: &G,
    layout: NetLayout,
    m: &MoveRecord,
    winner: Option<Color>,
    q: f32,
) -> Option<Sample> {
    let policy = search_policy(game, m)?;
    let mut dense = vec![0.0f32; layout.input_size()];
    game.encode_planes(&layout, &mut dense);
    let planes = dense
        .iter()
        .enumerate()
        .filter(|&(_, &v)| v != 0.0)
        .map(|(i, &v)| (i as u32, v))
        .collect();
    let o = outcome_wdl(winner, game.side_to_move());
    let s = m.root_value.clamp(0.0, 1.0);
    let qv = [s, 0.0, 1.0 - s];
    let wdl = [
        (1.0 - q) * o[0] + q * qv[0],
        (1.0 - q) * o[1] + q * qv[1],
        (1.0 - q) * o[2] + q * qv[2],
    ];
    Some(Sample {
        layout,
        planes,
        policy,
        wdl,
        material: 0.0,
        opponent_policy: Vec::new(),
    })
}

/// Replays `record` and returns one sample per fully searched move with a non-empty
/// searched list. Shogi, minishogi and tai shogi records.
pub fn samples_from_record(
    record: &GameRecord,
    config: &SampleConfig,
) -> Result<Vec<Sample>, ReplayError> {
    let q = config.q_blend.clamp(0.0, 1.0);
    let winner = record.outcome.winner;
    let kind = record.game()?;
    if let Some(expected) = config.game
        && kind != expected
    {
        return Err(ReplayError::OtherGame {
            found: kind.name(),
            expected: expected.name(),
        });
    }
    let layout =
        shogi_registry::layout_with(kind, config.features).map_err(ReplayError::Features)?;
    let mut out = Vec::new();
    // Black's material balance before each move, then at the end; and where each sample
    // stands (its ply and side to move).
    let mut balance: Vec<f32> = Vec::with_capacity(record.moves.len() + 1);
    let mut sampled_at: Vec<(usize, Color)> = Vec::new();
    // What each ply's mover chose (only for the opponent-policy target).
    let mut chosen: Vec<Vec<(u32, f32)>> = Vec::new();
    let (scale, exchange) = (config.material_scale, config.material_exchange);
    with_game_type!(kind, G => G::replay_each(record, |game, m| {
        if let Some(sample) = sample_at(game, layout, m, winner, q) {
            sampled_at.push((balance.len(), game.side_to_move()));
            out.push(sample);
        }
        if config.opponent_policy {
            chosen.push(chosen_policy(game, m));
        }
        balance.push(black_material_balance(game, scale, exchange));
    })
    .map(|end| balance.push(black_material_balance(&end, scale, exchange))))?;
    let ahead = config.material_plies as usize;
    let blend = config.material_value.clamp(0.0, 1.0);
    for (sample, &(ply, side)) in out.iter_mut().zip(&sampled_at) {
        if let Some(reply) = chosen.get_mut(ply + 1) {
            sample.opponent_policy = std::mem::take(reply);
        }
        let black = balance[(ply + ahead).min(balance.len() - 1)];
        sample.material = match side {
            Color::Black => black,
            Color::White => -black,
        };
        if blend > 0.0 {
            let m = (config.material_gain * sample.material).tanh();
            let material_wdl = [(1.0 + m) / 2.0, 0.0, (1.0 - m) / 2.0];
            for (t, mt) in sample.wdl.iter_mut().zip(material_wdl) {
                *t = (1.0 - blend) * *t + blend * mt;
            }
        }
    }
    Ok(out)
}

impl Sample {
    /// The dense input planes.
    pub fn dense_planes(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.layout.input_size()];
        self.write_planes(&mut out);
        out
    }

    /// The dense policy target.
    pub fn dense_policy(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.layout.policy_size()];
        self.write_policy(&mut out);
        out
    }

    /// Writes the input planes into a zeroed batch row.
    pub fn write_planes(&self, row: &mut [f32]) {
        for &(i, v) in &self.planes {
            row[i as usize] = v;
        }
    }

    /// Writes the policy target into a zeroed batch row.
    pub fn write_policy(&self, row: &mut [f32]) {
        for &(i, v) in &self.policy {
            row[i as usize] = v;
        }
    }

    /// The left-right mirrored sample (files 1 <-> n): planes mirrored column-wise,
    /// policy through [`shogi_features::mirror_policy_index`]. Shogi and minishogi only:
    /// tai shogi's setup and pieces are not mirror-symmetric (left and right generals,
    /// deva and dark spirit), so a tai sample is returned unchanged.
    pub fn mirrored(&self) -> Sample {
        let Some(variant) = variant_from_name(self.layout.variant) else {
            return self.clone();
        };
        let n = self.layout.board;
        let area = n * n;
        let mut planes: Vec<(u32, f32)> = self
            .planes
            .iter()
            .map(|&(i, v)| {
                let i = i as usize;
                let (p, cell) = (i / area, i % area);
                let (row, col) = (cell / n, cell % n);
                ((p * area + row * n + (n - 1 - col)) as u32, v)
            })
            .collect();
        planes.sort_unstable_by_key(|&(i, _)| i);
        // Entries at their mirrored indices, in increasing order again.
        let mirror_policy = |entries: &[(u32, f32)]| {
            let mut out: Vec<(u32, f32)> = entries
                .iter()
                .map(|&(i, v)| {
                    let i = shogi_features::mirror_policy_index(variant, i as usize);
                    (i as u32, v)
                })
                .collect();
            out.sort_unstable_by_key(|&(i, _)| i);
            out
        };
        let policy = mirror_policy(&self.policy);
        let opponent_policy = mirror_policy(&self.opponent_policy);
        Sample {
            layout: self.layout,
            planes,
            policy,
            wdl: self.wdl,
            material: self.material,
            opponent_policy,
        }
    }

    /// Mirrors with probability 0.5 (where mirroring is a symmetry of the game).
    pub fn augmented(&self, rng: &mut impl Rng) -> Sample {
        if rng.random_bool(0.5) {
            self.mirrored()
        } else {
            self.clone()
        }
    }
}
