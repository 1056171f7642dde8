//! Training runs from config files.
