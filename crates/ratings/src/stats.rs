//! Match statistics: score, Elo difference with a 95% interval (trinomial variance),
//! likelihood of superiority, and a sequential probability ratio test (GSPRT on the
//! logistic Elo scale) that stops a match early.

use serde::{Deserialize, Serialize};

/// The z value of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wins, draws and losses counted from one player's point of view (a match's tally;
/// `shogi_mcts::Wdl` is a position's win/draw/loss probabilities).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

impl Tally {
    /// A tally of `wins`, `draws` and `losses`.
    pub const fn new(wins: u32, draws: u32, losses: u32) -> Self {
        Tally {
            wins,
            draws,
            losses,
        }
    }

    /// Games in all.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Adds one game scored 1, 0.5 or 0.
    pub fn add(&mut self, score: f64) {
        if score > 0.75 {
            self.wins += 1;
        } else if score < 0.25 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }

    /// Mean score (wins + draws / 2) / games; 0.5 before any game.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.5;
        }
        (f64::from(self.wins) + 0.5 * f64::from(self.draws)) / f64::from(n)
    }

    /// Per-game variance of the score under the trinomial (win/draw/loss) model.
    pub fn variance(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.25;
        }
        let s = self.score();
        (f64::from(self.wins) * (1.0 - s).powi(2)
            + f64::from(self.draws) * (0.5 - s).powi(2)
            + f64::from(self.losses) * s.powi(2))
            / f64::from(n)
    }

    /// Elo difference with its 95% interval and the likelihood of superiority.
    pub fn elo(&self) -> EloEstimate {
        let n = f64::from(self.games().max(1));
        // Keep Elo finite on 100% / 0% scores: clamp half a game from the edge.
        let eps = 0.5 / n;
        let clamp = |s: f64| s.clamp(eps.min(0.5), (1.0 - eps).max(0.5));
        let s = self.score();
        let se = (self.variance() / n).sqrt();
        EloEstimate {
            elo: elo_from_score(clamp(s)),
            low: elo_from_score(clamp(s - Z95 * se)),
            high: elo_from_score(clamp(s + Z95 * se)),
            los: los(self.wins, self.losses),
        }
    }
}

/// A score against one opponent and the Elo difference it implies, with its 95%
/// interval: what gate reports, the rating history and learning curves record of a
/// match. Flattened into those files as `score`, `elo`, `elo_low`, `elo_high`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Score, (wins + draws / 2) / games.
    pub score: f64,
    /// Elo difference over the opponent.
    pub elo: f64,
    /// Lower end of the 95% interval.
    #[serde(rename = "elo_low")]
    pub low: f64,
    /// Upper end of the 95% interval.
    #[serde(rename = "elo_high")]
    pub high: f64,
}

impl Rating {
    /// The rating of a match with this score and Elo estimate.
    pub fn new(score: f64, elo: &EloEstimate) -> Rating {
        Rating {
            score,
            elo: elo.elo,
            low: elo.low,
            high: elo.high,
        }
    }
}

/// An Elo difference with its 95% interval and the likelihood of superiority.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// Elo difference (positive: the player is stronger).
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// Likelihood of superiority, 0..=1.
    pub los: f64,
}

/// The Elo difference that gives an expected score of `score` (logistic model):
/// `-400 log10(1 / score - 1)`.
pub fn elo_from_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The expected score of a player `elo` points stronger: `1 / (1 + 10^(-elo / 400))`.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Likelihood of superiority: `0.5 (1 + erf((W - L) / sqrt(2 (W + L))))` (draws carry no
/// information); 0.5 without decisive games.
pub fn los(wins: u32, losses: u32) -> f64 {
    let decisive = f64::from(wins + losses);
    if decisive == 0.0 {
        return 0.5;
    }
    0.5 * (1.0 + erf((f64::from(wins) - f64::from(losses)) / (2.0 * decisive).sqrt()))
}

/// The error function (Numerical Recipes' Chebyshev fit of `erfc`, absolute error below
/// 1.2e-7 everywhere).
pub fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { 1.0 - r } else { r - 1.0 }
}

/// SPRT settings: H0 "the Elo difference is `elo0`" against H1 "it is `elo1`", with
/// error rates `alpha` (accepting H1 when H0 holds) and `beta`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtConfig {
    /// Elo of H0. Default 0.
    pub elo0: f64,
    /// Elo of H1. Default 10.
    pub elo1: f64,
    /// False-positive rate. Default 0.05.
    pub alpha: f64,
    /// False-negative rate. Default 0.05.
    pub beta: f64,
}

impl Default for SprtConfig {
    fn default() -> Self {
        SprtConfig {
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
        }
    }
}

/// What the SPRT says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprtDecision {
    /// The log-likelihood ratio crossed the upper bound: H1 (the player is stronger).
    AcceptH1,
    /// It crossed the lower bound: H0.
    AcceptH0,
    /// Neither bound yet: keep playing.
    Continue,
}

/// The state of an SPRT after some games.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtState {
    /// Log-likelihood ratio of H1 against H0.
    pub llr: f64,
    /// Lower bound `ln(beta / (1 - alpha))`.
    pub lower: f64,
    /// Upper bound `ln((1 - beta) / alpha)`.
    pub upper: f64,
    /// The decision.
    pub decision: SprtDecision,
}

impl SprtConfig {
    /// `(lower, upper)` LLR bounds.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), String> {
        if self.elo1.partial_cmp(&self.elo0) != Some(std::cmp::Ordering::Greater) {
            return Err(format!(
                "SPRT needs elo1 > elo0 (got {} and {})",
                self.elo0, self.elo1
            ));
        }
        for (name, p) in [("alpha", self.alpha), ("beta", self.beta)] {
            if p.is_nan() || p <= 0.0 || p >= 0.5 {
                return Err(format!("SPRT {name} must be in (0, 0.5), got {p}"));
            }
        }
        Ok(())
    }

    /// The generalised SPRT on `results` (Van den Bergh's normal approximation on the
    /// trinomial model): `LLR = N (s1 - s0) (2 s - s0 - s1) / (2 var)`, with `s0`, `s1` the
    /// expected scores of `elo0`, `elo1`, `s` the observed score and `var` its per-game
    /// variance. The variance is estimated with one pseudo-win and one pseudo-loss added,
    /// so that a short run of identical results (variance 0) cannot decide at once.
    pub fn state(&self, results: &Tally) -> SprtState {
        let (lower, upper) = self.bounds();
        let n = f64::from(results.games());
        let llr = if n == 0.0 {
            0.0
        } else {
            let s0 = score_from_elo(self.elo0);
            let s1 = score_from_elo(self.elo1);
            let var = Tally::new(results.wins + 1, results.draws, results.losses + 1).variance();
            n * (s1 - s0) * (2.0 * results.score() - s0 - s1) / (2.0 * var)
        };
        let decision = if llr >= upper {
            SprtDecision::AcceptH1
        } else if llr <= lower {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        };
        SprtState {
            llr,
            lower,
            upper,
            decision,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_interval_and_los_match_a_hand_computed_example() {
        // 60 wins, 20 draws, 20 losses: s = 0.7; per-game variance
        // (60 * 0.3^2 + 20 * 0.2^2 + 20 * 0.7^2) / 100 = 0.16, standard error 0.04;
        // interval of s: 0.7 -+ 1.96 * 0.04 = [0.62160, 0.77840];
        // Elo = -400 log10(1/0.7 - 1) = 147.19, low = 86.22, high = 218.25;
        // LOS = 0.5 (1 + erf(40 / sqrt(160))) = 0.99999611.
        let r = Tally::new(60, 20, 20);
        assert!((r.score() - 0.7).abs() < 1e-12);
        assert!((r.variance() - 0.16).abs() < 1e-12);
        let e = r.elo();
        assert!((e.elo - 147.19).abs() < 0.01, "{e:?}");
        assert!((e.low - 86.22).abs() < 0.05, "{e:?}");
        assert!((e.high - 218.25).abs() < 0.05, "{e:?}");
        assert!((e.los - 0.999_996_11).abs() < 1e-6, "{e:?}");
    }

    #[test]
    fn even_results_are_zero_elo_and_even_los() {
        let r = Tally::new(10, 5, 10);
        let e = r.elo();
        assert!(e.elo.abs() < 1e-9);
        assert!((e.high + e.low).abs() < 1e-9 && e.high > 0.0);
        assert!((e.los - 0.5).abs() < 1e-7);
    }

    #[test]
    fn perfect_scores_stay_finite() {
        let r = Tally::new(8, 0, 0);
        let e = r.elo();
        assert!(e.elo.is_finite() && e.elo > 400.0, "{e:?}");
        assert!(e.low.is_finite() && e.high.is_finite());
        let json = serde_json::to_string(&e).unwrap();
        let back: EloEstimate = serde_json::from_str(&json).unwrap();
        assert!((back.elo - e.elo).abs() < 1e-9 && (back.los - e.los).abs() < 1e-12);
    }

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (-1.0, -0.842_700_792_9),
        ] {
            assert!((erf(x) - want).abs() < 2e-7, "erf({x}) = {}", erf(x));
        }
        assert!((score_from_elo(elo_from_score(0.64)) - 0.64).abs() < 1e-12);
    }

    /// Plays games one by one from a fixed cycle of outcomes and returns the decision
    /// and the number of games at which the SPRT stopped (or `max` if it never did).
    fn run_sprt(cycle: &[f64], max: u32) -> (SprtDecision, u32) {
        let sprt = SprtConfig::default();
        let mut r = Tally::default();
        for i in 0..max {
            r.add(cycle[i as usize % cycle.len()]);
            let st = sprt.state(&r);
            if st.decision != SprtDecision::Continue {
                return (st.decision, i + 1);
            }
        }
        (SprtDecision::Continue, max)
    }

    #[test]
    fn sprt_stops_early_on_a_clear_difference() {
        // 3 wins per loss: 75% (about +190 Elo), far above H1 = +10.
        let (d, n) = run_sprt(&[1.0, 1.0, 0.0, 1.0], 1000);
        assert_eq!(d, SprtDecision::AcceptH1);
        assert!((20..250).contains(&n), "stopped after {n} games");
        // The mirror image accepts H0 just as fast.
        let (d, n) = run_sprt(&[0.0, 0.0, 1.0, 0.0], 1000);
        assert_eq!(d, SprtDecision::AcceptH0);
        assert!((20..250).contains(&n), "stopped after {n} games");
        // One lucky win decides nothing.
        let one = Tally::new(1, 0, 0);
        assert_eq!(
            SprtConfig::default().state(&one).decision,
            SprtDecision::Continue
        );
    }

    #[test]
    fn sprt_keeps_going_on_a_tie() {
        // A tie is H0 for bounds [0, 10] but only weakly: 200 games of
        // win/loss/draw/draw must not decide (LLR about -0.0008 per game).
        let sprt = SprtConfig::default();
        let mut r = Tally::default();
        for i in 0..200 {
            r.add([1.0, 0.0, 0.5, 0.5][i % 4]);
            let st = sprt.state(&r);
            assert_eq!(st.decision, SprtDecision::Continue, "game {i}: {st:?}");
        }
        assert!(sprt.state(&r).llr < 0.0);
        // Halfway between symmetric bounds a tie never decides.
        let sym = SprtConfig {
            elo0: -10.0,
            elo1: 10.0,
            ..SprtConfig::default()
        };
        let tie = Tally::new(5000, 1000, 5000);
        let st = sym.state(&tie);
        assert!(st.llr.abs() < 1e-9, "{st:?}");
        assert_eq!(st.decision, SprtDecision::Continue);
        let (lower, upper) = sprt.bounds();
        assert!((lower - (0.05f64 / 0.95).ln()).abs() < 1e-12);
        assert!((upper - (0.95f64 / 0.05).ln()).abs() < 1e-12);
    }

    #[test]
    fn sprt_validation() {
        assert!(SprtConfig::default().validate().is_ok());
        let bad = SprtConfig {
            elo0: 5.0,
            elo1: 5.0,
            ..SprtConfig::default()
        };
        assert!(bad.validate().is_err());
    }
}
