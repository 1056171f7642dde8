//! A knob described once: its key, kind, range, unit, role and meaning, its accessors
//! over the settings it lives in (`S`, and `R` at play time), and what every front end
//! derives from that (a value read from text and checked, its flag and USI names, the
//! documented table). The search's knobs are [`crate::SEARCH_KNOBS`]; this module knows
//! no settings struct.

/// What values a knob takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnobKind {
    /// `true` or `false` (a USI `check`).
    Switch,
    /// A whole number (a USI `spin`).
    Count,
    /// A real number (a USI `spin` in hundredths).
    Real,
    /// One of these names (a USI `combo`); the value is the name's index.
    Choice(&'static [&'static str]),
}

/// Where a knob stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnobRole {
    /// Part of every search (budgets, exploration, noise).
    Core,
    /// A lever a shipped config turns (`configs/*.toml`).
    Lever,
    /// Measured and not adopted by a shipped config, kept for experiments; its result
    /// is in docs/EXPERIMENTS.md.
    Experimental,
}

impl KnobRole {
    fn name(self) -> &'static str {
        match self {
            KnobRole::Core => "core",
            KnobRole::Lever => "lever",
            KnobRole::Experimental => "experimental",
        }
    }
}

/// A knob that is also a root option at play time (a run's `[play]` key, a
/// `match`/`curve` flag, a USI option), read and written on the play-time settings `R`.
#[derive(Debug)]
pub struct PlayForm<R: 'static> {
    /// Only a Gumbel root reads it (the flag requires `--gumbel`).
    pub gumbel_only: bool,
    /// A rule written by hand (static exchange): the plain search (`--plain`) leaves it
    /// off, so the score is what the network owns.
    pub hand_written: bool,
    pub(crate) get: fn(&R) -> f64,
    pub(crate) set: fn(&mut R, f64),
}

impl<R> Clone for PlayForm<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for PlayForm<R> {}

/// One knob, described once, of the settings `S` (and, at play time, `R`).
#[derive(Debug)]
pub struct Knob<S: 'static, R: 'static> {
    /// The config key (`[selfplay]` and, for a play knob, `[play]`) and the field's name.
    pub key: &'static str,
    /// Older names a run directory's config may still use.
    pub aliases: &'static [&'static str],
    /// The values it takes.
    pub kind: KnobKind,
    /// The least value.
    pub min: f64,
    /// Whether `min` itself is refused (a value must be above it).
    pub above_min: bool,
    /// The largest value.
    pub max: f64,
    /// The unit, or "" for a dimensionless number or a switch.
    pub unit: &'static str,
    /// Core, a shipped config's lever, or experimental.
    pub role: KnobRole,
    /// Whether and how it is also a play-time root option.
    pub play: Option<PlayForm<R>>,
    /// One line: what it does.
    pub meaning: &'static str,
    pub(crate) get: fn(&S) -> f64,
    pub(crate) set: fn(&mut S, f64),
}

/// A knob value that is not one the knob takes; the message says what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct KnobError {
    /// What was wrong and what is allowed.
    pub message: String,
}

impl<S: Default, R: Default> Knob<S, R> {
    /// Its value in `config`.
    pub fn get(&self, config: &S) -> f64 {
        (self.get)(config)
    }

    /// Sets it in `config` (a value [`Knob::check`] accepted).
    pub fn set(&self, config: &mut S, value: f64) {
        (self.set)(config, value)
    }

    /// Its value in a play-time root (a play knob's; `None` for the others).
    pub fn get_at_play(&self, root: &R) -> Option<f64> {
        self.play.map(|p| (p.get)(root))
    }

    /// Sets it in a play-time root (a play knob; others are left alone).
    pub fn set_at_play(&self, root: &mut R, value: f64) {
        if let Some(p) = self.play {
            (p.set)(root, value)
        }
    }

    /// The command-line flag's name (`gumbel-gain`).
    pub fn flag(&self) -> String {
        self.key.replace('_', "-")
    }

    /// The USI option's name (`GumbelGain`).
    pub fn usi_name(&self) -> String {
        self.key
            .split('_')
            .map(|word| {
                let mut chars = word.chars();
                chars.next().map_or(String::new(), |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect()
    }

    /// How much one unit of the USI option is: hundredths for a real number (spins are
    /// whole numbers), one otherwise.
    pub fn usi_scale(&self) -> f64 {
        if self.kind == KnobKind::Real {
            100.0
        } else {
            1.0
        }
    }

    /// `value` if the knob takes it, or what is wrong with it.
    pub fn check(&self, value: f64) -> Result<f64, KnobError> {
        match self.refusal(value) {
            None => Ok(value),
            Some(allowed) => Err(KnobError {
                message: format!("{} is out of range: {allowed}", self.show(value)),
            }),
        }
    }

    /// What is allowed, if `value` is not.
    pub fn refusal(&self, value: f64) -> Option<String> {
        if !value.is_finite() {
            return Some("must be a finite number".into());
        }
        if matches!(self.kind, KnobKind::Count | KnobKind::Choice(_)) && value.fract() != 0.0 {
            return Some("must be a whole number".into());
        }
        let low_ok = if self.above_min {
            value > self.min
        } else {
            value >= self.min
        };
        (!low_ok || value > self.max).then(|| self.range_text())
    }

    /// The allowed range in words (`must be between 0 and 1`).
    pub fn range_text(&self) -> String {
        match (self.kind, self.above_min) {
            (KnobKind::Switch, _) => "true or false".into(),
            (KnobKind::Choice(names), _) => format!("one of {}", names.join(", ")),
            (_, true) => format!("must be above {} and at most {}", self.min, self.max),
            (_, false) => format!("must be between {} and {}", self.min, self.max),
        }
    }

    /// Reads a value written as text (a flag's, `--set`'s): `true`/`false`, a number,
    /// or a choice's name; checked against the range.
    pub fn parse(&self, text: &str) -> Result<f64, KnobError> {
        let text = text.trim();
        let bad = |expected: &str| KnobError {
            message: format!("{text:?} is not {expected}"),
        };
        let value = match self.kind {
            KnobKind::Switch => match text {
                "true" => 1.0,
                "false" => 0.0,
                _ => return Err(bad("true or false")),
            },
            KnobKind::Choice(names) => names
                .iter()
                .position(|n| *n == text)
                .ok_or_else(|| bad(&format!("one of {}", names.join(", "))))?
                as f64,
            KnobKind::Count => text.parse::<u64>().map_err(|_| bad("a whole number"))? as f64,
            KnobKind::Real => text.parse::<f64>().map_err(|_| bad("a number"))?,
        };
        self.check(value)
    }

    /// A value as the config and the flags write it.
    pub fn show(&self, value: f64) -> String {
        match self.kind {
            KnobKind::Switch => (value != 0.0).to_string(),
            KnobKind::Choice(names) => names
                .get(value as usize)
                .map_or_else(|| value.to_string(), |n| n.to_string()),
            KnobKind::Count | KnobKind::Real => {
                // f32 fields widen to f64 with noise (0.1 -> 0.10000000149): show the
                // shortest decimal that reads back as the same f32.
                if self.kind == KnobKind::Real {
                    (value as f32).to_string()
                } else {
                    value.to_string()
                }
            }
        }
    }

    /// Its default: `S::default()`'s value.
    pub fn default_value(&self) -> f64 {
        self.get(&S::default())
    }
}

/// The knob of `knobs` named `key` (or one of its old names).
pub fn find<S: Default, R: Default>(
    knobs: &'static [Knob<S, R>],
    key: &str,
) -> Option<&'static Knob<S, R>> {
    knobs
        .iter()
        .find(|k| k.key == key || k.aliases.contains(&key))
}

/// The documented table of `knobs` (docs/SEARCH.md holds the search's; a test keeps the
/// two equal): key, default (`S::default()`'s), range, unit, role, play-time forms (the
/// default `R::default()`'s) and meaning.
pub fn knob_table<S: Default, R: Default>(knobs: &[Knob<S, R>]) -> String {
    let mut out = String::from(
        "| key | default | allowed | unit | role | at play time | meaning |\n|---|---|---|---|---|---|---|\n",
    );
    let play_default = R::default();
    for k in knobs {
        let at_play = match k.play {
            Some(p) => {
                let gumbel = if p.gumbel_only {
                    " (with `--gumbel`)"
                } else {
                    ""
                };
                let default = k.get_at_play(&play_default).unwrap_or_default();
                format!(
                    "`[play]`, `--{}`{gumbel}, USI `{}`{}; default {}",
                    k.flag(),
                    k.usi_name(),
                    if k.usi_scale() == 1.0 {
                        String::new()
                    } else {
                        " (hundredths)".into()
                    },
                    k.show(default)
                )
            }
            None => "no".into(),
        };
        let allowed = match k.kind {
            KnobKind::Switch | KnobKind::Choice(_) => k.range_text(),
            _ => {
                let low = if k.above_min { "above " } else { "" };
                format!("{low}{} to {}", k.min, k.max)
            }
        };
        out.push_str(&format!(
            "| `{}` | {} | {allowed} | {} | {} | {at_play} | {} |\n",
            k.key,
            k.show(k.default_value()),
            k.unit,
            k.role.name(),
            k.meaning
        ));
    }
    out
}

/// A knob's accessors over a field of the same name in the settings type `$ty`: `switch`
/// for a `bool`, `number` for any numeric field.
#[doc(hidden)]
#[macro_export]
macro_rules! knob_access {
    (switch, $ty:ty, $field:ident) => {
        (
            |c: &$ty| if c.$field { 1.0 } else { 0.0 },
            |c: &mut $ty, v: f64| c.$field = v != 0.0,
        )
    };
    (number, $ty:ty, $field:ident) => {
        (
            |c: &$ty| c.$field as f64,
            |c: &mut $ty, v: f64| c.$field = v as _,
        )
    };
}
