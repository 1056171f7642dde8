//! The one fork from "which game" (a [`GameKind`] value) to the code generic over the
//! game's type. Shogi and minishogi are one type, `ShogiGame` (the variant is part of
//! its position); tai shogi is `TaiGame`. A new game adds its arm to
//! [`with_game_type!`](crate::with_game_type) and nothing else forks; its adapters are one
//! module of this crate (see the crate's documentation).

#[doc(hidden)]
pub use shogi_game::GameKind;
#[doc(hidden)]
pub use shogi_rules::ShogiGame;
#[doc(hidden)]
pub use shogi_tai::TaiGame;

/// Evaluates `body` with the type name `G` bound to `kind`'s concrete game type:
///
/// ```
/// use shogi_registry::with_game_type;
/// use shogi_game::GameKind;
///
/// let name = with_game_type!(GameKind::Tai, G => std::any::type_name::<G>());
/// assert!(name.ends_with("TaiGame"));
/// ```
///
/// `body` is compiled once per game type, so it may call functions generic over any
/// trait every game implements (`Game`, `NetGame`, `RecordGame`, `ArenaGame`,
/// `UsiGame`).
#[macro_export]
macro_rules! with_game_type {
    ($kind:expr, $G:ident => $body:expr) => {
        match $kind {
            $crate::dispatch::GameKind::Shogi | $crate::dispatch::GameKind::Minishogi => {
                type $G = $crate::dispatch::ShogiGame;
                $body
            }
            $crate::dispatch::GameKind::Tai => {
                type $G = $crate::dispatch::TaiGame;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use shogi_game::GameKind;

    #[test]
    fn every_kind_reaches_its_game_type() {
        for kind in GameKind::ALL {
            let name = with_game_type!(kind, G => std::any::type_name::<G>());
            let want = if kind == GameKind::Tai {
                "TaiGame"
            } else {
                "ShogiGame"
            };
            assert!(name.ends_with(want), "{kind}: {name}");
        }
    }
}
