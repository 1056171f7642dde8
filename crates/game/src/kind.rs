//! Which game is played, as a value: the one name every layer uses for "shogi,
//! minishogi or tai shogi" (configs, manifests, records, the command line).

use std::fmt;
use std::str::FromStr;

/// A game this project plays. Shogi and minishogi share one rules engine (the variant is
/// part of the position); tai shogi has its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum GameKind {
    /// Standard shogi (本将棋), 9x9.
    Shogi,
    /// Minishogi (五五将棋), 5x5.
    Minishogi,
    /// Tai shogi (泰将棋), 25x25.
    Tai,
}

impl GameKind {
    /// Every game, in this order.
    pub const ALL: [GameKind; 3] = [GameKind::Shogi, GameKind::Minishogi, GameKind::Tai];

    /// The name used in configs, manifests, records and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            GameKind::Shogi => "shogi",
            GameKind::Minishogi => "minishogi",
            GameKind::Tai => "tai",
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a game's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownGame(pub String);

impl fmt::Display for UnknownGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown game {:?}: expected one of", self.0)?;
        for (i, kind) in GameKind::ALL.iter().enumerate() {
            write!(f, "{} {kind}", if i == 0 { "" } else { "," })?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownGame {}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<GameKind, UnknownGame> {
        GameKind::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or_else(|| UnknownGame(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_games() {
        for kind in GameKind::ALL {
            assert_eq!(kind.name().parse::<GameKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.name());
        }
        let err = "chess".parse::<GameKind>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown game \"chess\": expected one of shogi, minishogi, tai"
        );
        assert!("Shogi".parse::<GameKind>().is_err());
    }
}
