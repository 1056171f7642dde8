//! The run config's range checks: every key's allowed values, each error naming the
//! key's full path (`RunConfig::validate`, called by `RunConfig::parse`).

use super::{ConfigError, RunConfig, ScheduleName};

/// The longest wall-clock budget a run may ask for: far beyond any run, and far below
/// what a clock's arithmetic overflows at.
pub const MAX_RUN_MINUTES: f64 = 1e8;
/// The most self-play games in flight in one process.
pub const MAX_GAMES_IN_FLIGHT: usize = 65_536;
/// The largest learner minibatch.
pub const MAX_BATCH: usize = 65_536;

impl RunConfig {
    /// Checks every value's range; the error names the key's full path.
    pub fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        let c = RangeCheck { origin };
        self.validate_floats(&c)?;
        self.validate_counts(&c)?;
        self.validate_run_and_game(&c)?;
        self.validate_selfplay(&c)?;
        self.validate_learner(&c)?;
        self.validate_gate(&c)?;
        self.validate_network(&c)
    }

    /// Every float key with its bounds, in one table: NaN and the infinities pass most
    /// range checks written as comparisons (and TOML spells them `nan`, `inf`), so each
    /// is refused first, by name, and then held to its bounds. Checks that relate keys
    /// (a budget, the SPRT's bounds) follow in their sections.
    fn validate_floats(&self, c: &RangeCheck<'_>) -> Result<(), ConfigError> {
        use Bounds::*;
        let (r, s, l, gate) = (&self.run, &self.selfplay, &self.learner, &self.gate);
        for (key, v, bounds) in [
            ("run.minutes", r.minutes, AtLeastZero),
            (
                "selfplay.resign_threshold",
                s.resign_threshold as f64,
                Within(0.0, 1.0),
            ),
            (
                "selfplay.resign_disabled_fraction",
                s.resign_disabled_fraction as f64,
                Within(0.0, 1.0),
            ),
            ("learner.replay_ratio", l.replay_ratio, AboveZero),
            ("learner.window_growth", l.window_growth, Within(0.0, 10.0)),
            (
                "learner.window_exponent",
                l.window_exponent,
                AboveZeroAtMost(1.0),
            ),
            ("learner.lr", l.lr, AboveZeroAtMost(10.0)),
            ("learner.lr_factor", l.lr_factor, AboveZeroAtMost(1.0)),
            ("learner.lr_min", l.lr_min, Within(0.0, 10.0)),
            ("learner.momentum", l.momentum, Within(0.0, 1.0)),
            ("learner.weight_decay", l.weight_decay, AtLeastZero),
            ("learner.grad_clip", l.grad_clip, AtLeastZero),
            ("learner.value_weight", l.value_weight, AtLeastZero),
            ("learner.q_blend", l.q_blend as f64, Within(0.0, 1.0)),
            ("learner.material_weight", l.material_weight, AtLeastZero),
            (
                "learner.material_value",
                l.material_value as f64,
                Within(0.0, 1.0),
            ),
            ("learner.material_gain", l.material_gain as f64, AtLeastZero),
            ("learner.ema_decay", l.ema_decay, Fraction),
            (
                "learner.opponent_policy_weight",
                l.opponent_policy_weight,
                AtLeastZero,
            ),
            ("gate.threshold", gate.threshold, Within(0.0, 1.0)),
            ("gate.sprt_elo0", gate.sprt_elo0, Finite),
            ("gate.sprt_elo1", gate.sprt_elo1, Finite),
            ("gate.sprt_error", gate.sprt_error, Finite),
        ] {
            if !v.is_finite() {
                return Err(c.range(key, v.to_string(), "must be a finite number"));
            }
            if !bounds.hold(v) {
                return Err(c.range(key, v.to_string(), &bounds.expected()));
            }
        }
        Ok(())
    }

    /// Every count that must be at least 1 (threads, sizes, budgets, batches).
    fn validate_counts(&self, c: &RangeCheck<'_>) -> Result<(), ConfigError> {
        let (r, s, l, gate) = (&self.run, &self.selfplay, &self.learner, &self.gate);
        for (key, count) in [
            ("run.status_every_secs", r.status_every_secs),
            ("game.max_plies", self.game.max_plies as u64),
            ("network.blocks", self.network.blocks as u64),
            ("network.channels", self.network.channels as u64),
            ("selfplay.actors", s.actors as u64),
            ("selfplay.max_batch", s.max_batch as u64),
            ("selfplay.games_per_chunk", s.games_per_chunk as u64),
            ("selfplay.games_per_generation", s.games_per_generation),
            ("learner.batch", l.batch as u64),
            ("learner.window", l.window as u64),
            ("learner.min_positions", l.min_positions as u64),
            ("learner.steps_per_candidate", l.steps_per_candidate),
            ("gate.simulations", gate.simulations as u64),
            ("gate.parallel_games", gate.parallel_games as u64),
        ] {
            c.at_least(key, count, 1)?;
        }
        // Sizes that allocate at once (a slot a game, a row a sample, a thread a game):
        // a typo is refused by name instead of aborting the process out of memory.
        for (key, count, max) in [
            ("selfplay.actors", s.actors, MAX_GAMES_IN_FLIGHT),
            ("learner.batch", l.batch, MAX_BATCH),
            (
                "gate.parallel_games",
                gate.parallel_games,
                shogi_model::MAX_THREADS,
            ),
        ] {
            c.at_most(key, count, max, &max.to_string())?;
        }
        Ok(())
    }

    /// The network's own bounds (dimensions, parameter count), named by its key: after
    /// the checks of its keys one by one (the stem, the input planes for the game), so
    /// the model config it builds is one of this game's.
    fn validate_network(&self, c: &RangeCheck<'_>) -> Result<(), ConfigError> {
        if let Err(why) = crate::run::model_config(self).validate() {
            let n = &self.network;
            return Err(c.range(
                "network",
                format!("{} blocks x {} channels", n.blocks, n.channels),
                why.trim_start_matches("model config: "),
            ));
        }
        Ok(())
    }

    fn validate_run_and_game(&self, c: &RangeCheck<'_>) -> Result<(), ConfigError> {
        let r = &self.run;
        if r.minutes > MAX_RUN_MINUTES {
            return Err(c.range(
                "run.minutes",
                r.minutes.to_string(),
                "must be at most 100000000 (190 years; for a run without a time budget set 0 and run.max_steps)",
            ));
        }
        if r.minutes == 0.0 && r.max_steps == 0 {
            return Err(c.range(
                "run.minutes",
                "0".into(),
                "a run needs a budget: set run.minutes or run.max_steps above 0",
            ));
        }
        // Availability is checked when the run starts: a GPU config must still validate here.
        shogi_model::check_device_syntax(&r.device)
            .map_err(|e| c.range("run.device", format!("{:?}", r.device), &e.to_string()))?;
        let g = &self.game;
        let n = &self.network;
        if !shogi_model::valid_stem_kernel(n.stem_kernel) {
            return Err(c.range(
                "network.stem_kernel",
                n.stem_kernel.to_string(),
                "an odd kernel, 1 to 7",
            ));
        }
        if let Err(why) = shogi_registry::layout_with(g.variant, n.features) {
            return Err(c.range("network.features", format!("{:?}", n.features.name()), &why));
        }
        Ok(())
    }

    fn validate_selfplay(&self, c: &RangeCheck<'_>) -> Result<(), ConfigError> {
        let s = &self.selfplay;
        // Every thread and every batch slot must have games to serve it: a thread
        // without a game idles, and a batch larger than all games' leaves together never
        // fills (each game has at most tree_batch leaves waiting).
        let games = format!("selfplay.actors ({})", s.actors);
        let idles = format!("{games}: a thread without a game idles");
        if let Some(threads) = s.actor_threads.fixed() {
            c.at_most("selfplay.actor_threads", threads, s.actors, &idles)?;
        }
        let leaves = s.actors.saturating_mul(s.search.tree_batch);
        let (actors, batch) = (s.actors, s.search.tree_batch);
        let never_fills = format!(
            "selfplay.actors x selfplay.tree_batch ({actors} x {batch} = {leaves}): a larger batch never fills"
        );
        c.at_most("selfplay.max_batch", s.max_batch, leaves, &never_fills)?;
        Ok(())
    }

    fn validate_learner(&self, c: &RangeCheck<'_>) -> Result<(), ConfigError> {
        let l = &self.learner;
        let window = format!("learner.window ({})", l.window);
        c.at_most("learner.min_positions", l.min_positions, l.window, &window)?;
        if l.schedule == ScheduleName::Steps && l.lr_boundaries.windows(2).any(|w| w[0] >= w[1]) {
            return Err(c.range(
                "learner.lr_boundaries",
                format!("{:?}", l.lr_boundaries),
                "must be strictly increasing",
            ));
        }
        Ok(())
    }

    fn validate_gate(&self, c: &RangeCheck<'_>) -> Result<(), ConfigError> {
        let gate = &self.gate;
        if gate.enabled {
            c.at_least("gate.games", gate.games as u64, 2)?;
            if !gate.games.is_multiple_of(2) {
                return Err(c.range(
                    "gate.games",
                    gate.games.to_string(),
                    "must be even (each opening is played with both colours)",
                ));
            }
        }
        if !gate.fixed_opponent.trim().is_empty() {
            c.at_least("gate.fixed_games", gate.fixed_games as u64, 2)?;
            if let Err(e) = gate
                .fixed_opponent
                .trim()
                .parse::<shogi_arena::PlayerSpec>()
            {
                return Err(c.range("gate.fixed_opponent", gate.fixed_opponent.clone(), &e));
            }
        }
        if gate.sprt && (gate.sprt_elo1.is_nan() || gate.sprt_elo1 <= gate.sprt_elo0) {
            return Err(c.range(
                "gate.sprt_elo1",
                gate.sprt_elo1.to_string(),
                &format!("must exceed gate.sprt_elo0 ({})", gate.sprt_elo0),
            ));
        }
        if gate.sprt && !(gate.sprt_error > 0.0 && gate.sprt_error < 0.5) {
            return Err(c.range(
                "gate.sprt_error",
                gate.sprt_error.to_string(),
                "must be between 0 and 0.5",
            ));
        }
        Ok(())
    }
}

/// Builds range errors for one config file (`origin`).
struct RangeCheck<'a> {
    origin: &'a str,
}

impl RangeCheck<'_> {
    /// `key = value` is out of range: `expected` says what is allowed.
    fn range(&self, key: &str, value: String, expected: &str) -> ConfigError {
        ConfigError::Range {
            origin: self.origin.to_string(),
            key: key.to_string(),
            value,
            expected: expected.to_string(),
        }
    }

    fn at_least(&self, key: &str, value: u64, min: u64) -> Result<(), ConfigError> {
        if value < min {
            Err(self.range(key, value.to_string(), &format!("must be at least {min}")))
        } else {
            Ok(())
        }
    }

    /// `value` may not exceed `max`, the limit `limit` names (`selfplay.actors (24)`).
    fn at_most<T: PartialOrd + ToString>(
        &self,
        key: &str,
        value: T,
        max: T,
        limit: &str,
    ) -> Result<(), ConfigError> {
        if value > max {
            Err(self.range(key, value.to_string(), &format!("must not exceed {limit}")))
        } else {
            Ok(())
        }
    }
}

/// What a float key may be ([`RunConfig::validate`]'s table); NaN and the infinities are
/// refused before these are asked.
#[derive(Clone, Copy, Debug)]
enum Bounds {
    /// Any finite number.
    Finite,
    /// `0 <= v`.
    AtLeastZero,
    /// `0 < v`.
    AboveZero,
    /// `0 < v <= max`.
    AboveZeroAtMost(f64),
    /// `0 <= v < 1`.
    Fraction,
    /// `min <= v <= max`.
    Within(f64, f64),
}

impl Bounds {
    fn hold(self, v: f64) -> bool {
        match self {
            Bounds::Finite => true,
            Bounds::AtLeastZero => v >= 0.0,
            Bounds::AboveZero => v > 0.0,
            Bounds::AboveZeroAtMost(max) => v > 0.0 && v <= max,
            Bounds::Fraction => (0.0..1.0).contains(&v),
            Bounds::Within(min, max) => (min..=max).contains(&v),
        }
    }

    fn expected(self) -> String {
        match self {
            Bounds::Finite => "must be a finite number".into(),
            Bounds::AtLeastZero => "must be >= 0".into(),
            Bounds::AboveZero => "must be above 0".into(),
            Bounds::AboveZeroAtMost(max) => format!("must be above 0 and at most {max}"),
            Bounds::Fraction => "must be at least 0 and below 1".into(),
            Bounds::Within(min, max) => format!("must be between {min} and {max}"),
        }
    }
}
