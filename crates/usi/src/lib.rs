//! USI engine (`shogi-zero usi`): see docs/ARCHITECTURE.md.
