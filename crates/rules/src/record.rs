//! Game records (CSA, KIF).
