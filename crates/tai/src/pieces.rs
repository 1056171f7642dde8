//! The piece catalogue: every kind of tai shogi (93 in the setup, 8 more that only appear
//! by promotion), loaded from `data/pieces.toml` and checked once.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// A piece kind: an index into [`Catalogue::kinds`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PieceKind(pub u8);

/// What the catalogue knows about one kind.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindInfo {
    /// The setup's abbreviation (`DE`, `LGn`); unique ignoring case.
    pub abbr: String,
    /// English name.
    pub name: String,
    /// The seed's Russian name.
    pub name_ru: String,
    /// The seed's Betza notation, verbatim (empty where the seed gives none).
    pub betza: String,
    /// Whether the kind appears in the initial setup.
    pub in_setup: bool,
    /// Pieces of this kind per side in the setup.
    pub per_side: u32,
    /// Abbreviation of the kind it promotes to, empty if it never promotes.
    pub promotes_to: String,
    /// Royal (emperor, crown prince): a side with no royal left has lost.
    pub royal: bool,
    /// Readings, doubts and quotes from the seed.
    pub notes: String,
}

#[derive(Deserialize)]
struct File {
    piece: Vec<KindInfo>,
}

/// All kinds, in the order of `data/pieces.toml`.
#[derive(Debug)]
pub struct Catalogue {
    kinds: Vec<KindInfo>,
    promotes_to: Vec<Option<PieceKind>>,
    by_abbr: HashMap<String, PieceKind>,
}

/// Pieces per side in the setup (the seed: «177 клиновидных фигур 93 типов»).
pub const PIECES_PER_SIDE: u32 = 177;
/// Kinds in the setup.
pub const SETUP_KINDS: usize = 93;

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(|| {
    Catalogue::parse(include_str!("../data/pieces.toml"))
        .unwrap_or_else(|e| panic!("data/pieces.toml is inconsistent: {e}"))
});

impl Catalogue {
    /// The catalogue (parsed and checked on first use; the data is compiled in and a test
    /// loads it, so a broken file fails the build's tests, not a user's run).
    pub fn get() -> &'static Catalogue {
        &CATALOGUE
    }

    /// Parses and checks a catalogue: abbreviations unique ignoring case, promotions name
    /// existing kinds, promoted-only kinds have no setup count, and the setup holds
    /// [`PIECES_PER_SIDE`] pieces of [`SETUP_KINDS`] kinds.
    pub fn parse(text: &str) -> Result<Catalogue, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let kinds = file.piece;
        if kinds.len() > usize::from(u8::MAX) {
            return Err(format!("{} kinds do not fit a u8", kinds.len()));
        }
        let mut by_abbr = HashMap::new();
        for (i, k) in kinds.iter().enumerate() {
            if k.abbr.is_empty() || !k.abbr.chars().all(|c| c.is_ascii_alphabetic()) {
                return Err(format!("kind {i} has abbreviation {:?}", k.abbr));
            }
            if by_abbr
                .insert(k.abbr.to_ascii_lowercase(), PieceKind(i as u8))
                .is_some()
            {
                return Err(format!("abbreviation {} is used twice", k.abbr));
            }
            if k.in_setup != (k.per_side > 0) {
                return Err(format!(
                    "{}: in_setup = {} but per_side = {}",
                    k.abbr, k.in_setup, k.per_side
                ));
            }
        }
        let mut promotes_to = Vec::with_capacity(kinds.len());
        for k in &kinds {
            promotes_to.push(if k.promotes_to.is_empty() {
                None
            } else {
                Some(
                    *by_abbr
                        .get(&k.promotes_to.to_ascii_lowercase())
                        .ok_or_else(|| {
                            format!("{} promotes to unknown {}", k.abbr, k.promotes_to)
                        })?,
                )
            });
        }
        let total: u32 = kinds.iter().map(|k| k.per_side).sum();
        let setup_kinds = kinds.iter().filter(|k| k.in_setup).count();
        if total != PIECES_PER_SIDE || setup_kinds != SETUP_KINDS {
            return Err(format!(
                "the setup has {total} pieces of {setup_kinds} kinds per side, expected {PIECES_PER_SIDE} of {SETUP_KINDS}"
            ));
        }
        Ok(Catalogue {
            kinds,
            promotes_to,
            by_abbr,
        })
    }

    /// Every kind's description, indexed by [`PieceKind`].
    pub fn kinds(&self) -> &[KindInfo] {
        &self.kinds
    }

    /// Number of kinds.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Never true for the shipped catalogue.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// One kind's description.
    pub fn info(&self, kind: PieceKind) -> &KindInfo {
        &self.kinds[usize::from(kind.0)]
    }

    /// The kind with this abbreviation, ignoring case.
    pub fn by_abbr(&self, abbr: &str) -> Option<PieceKind> {
        self.by_abbr.get(&abbr.to_ascii_lowercase()).copied()
    }

    /// The kind `kind` promotes to, if it promotes.
    pub fn promotes_to(&self, kind: PieceKind) -> Option<PieceKind> {
        self.promotes_to[usize::from(kind.0)]
    }

    /// Every kind.
    pub fn all(&self) -> impl Iterator<Item = PieceKind> + '_ {
        (0..self.kinds.len()).map(|i| PieceKind(i as u8))
    }
}

impl PieceKind {
    /// This kind's description.
    pub fn info(self) -> &'static KindInfo {
        Catalogue::get().info(self)
    }

    /// The setup abbreviation.
    pub fn abbr(self) -> &'static str {
        &self.info().abbr
    }

    /// Whether the kind is royal.
    pub fn is_royal(self) -> bool {
        self.info().royal
    }

    /// The kind it promotes to.
    pub fn promotes_to(self) -> Option<PieceKind> {
        Catalogue::get().promotes_to(self)
    }
}
